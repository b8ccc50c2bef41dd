"""The Helm release: decoded in memory, kept only as a redacted projection."""

from __future__ import annotations

from pathlib import Path

import yaml
from scenariokit import SAMPLES, collect_scenario

from analyzer.bundle import Bundle
from tf_support_schemas.archive import zstd


def test_release_values_are_kept_redacted_and_nothing_else_of_the_secret(tmp_path: Path) -> None:
    spec = yaml.safe_load((SAMPLES / "healthy/helm/tensor-fusion-sys.yaml").read_text())
    proc, path, _ = collect_scenario("healthy", tmp_path)
    assert proc.returncode == 0, proc.stderr
    bundle = Bundle.open(path)
    release, status, _ = bundle.document("helm")
    assert status == "ok"
    assert release["chart"] == {"name": "tensor-fusion", "version": "1.8.7", "appVersion": "2.17.0"}
    assert (release["revision"], release["status"]) == (2, "deployed")
    values = release["values"]
    # What diagnosis needs stays readable ...
    assert values["initialGpuNodeLabelSelector"] == "nvidia.com/gpu.present=true"
    assert values["controller"]["isolationModePolicy"] == "dynamic"
    assert values["greptime"]["user"] == "tensorfusion"
    # ... the credentials do not.
    assert values["greptime"]["password"].startswith("<redacted:password:")
    assert values["agent"]["enrollToken"].startswith("<redacted:token:")
    assert values["cloudVendorCredentials"]["secretKey"].startswith("<redacted:")
    assert values["cloudVendorCredentials"]["accessKey"].startswith("<redacted:")
    # Not the Secret, not its rendered manifest, not one secret byte anywhere in the archive.
    raw = zstd.decompress(path.read_bytes())
    for secret in (
        spec["values"]["greptime"]["password"],
        spec["values"]["agent"]["enrollToken"],
        spec["values"]["cloudVendorCredentials"]["accessKey"],
        spec["values"]["cloudVendorCredentials"]["secretKey"],
        "sh.helm.release.v1",
        "Source: tensor-fusion/templates",
    ):
        assert secret.encode() not in raw, secret
    assert not any(a.get("resource") == "secrets" for a in bundle.manifest["artifacts"])
