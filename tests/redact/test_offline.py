"""`tf-collect redact PATH -o OUT`: a file, a directory, .tar.gz and .tar.zst, safely."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from scenariokit import tf_collect

from collector.bundle import BundleWriter, dump_json
from collector.errors import OutputError
from collector.redact import Redactor
from collector.redact.offline import InputError, redact_path
from tf_support_schemas.archive import zstd

KEY = b"offline-test-key-0123456789abcde"
LOG = "I0301 connect 10.0.3.17:443 with password=hunter2x on ip-10-0-3-17.ec2.internal\n"
SECRETS = ("10.0.3.17", "hunter2x", "10-0-3-17")


def _clean(data: bytes) -> None:
    for secret in SECRETS:
        assert secret.encode() not in data


def _tar_members(path: Path, mode: str) -> dict[str, bytes]:
    opener = zstd.open(path, "rb") if mode == "zst" else None
    with tarfile.open(fileobj=opener, mode="r|") if opener else tarfile.open(path, "r:gz") as tar:
        return {i.name: tar.extractfile(i).read() for i in tar if i.isfile()}


def test_file_gives_a_file(tmp_path: Path) -> None:
    src = tmp_path / "controller.log"
    src.write_text(LOG)
    out = tmp_path / "clean.log"
    result = redact_path(src, out, Redactor(key=KEY))
    _clean(out.read_bytes())
    assert result.kind == "file" and src.read_text() == LOG  # the input is untouched


def test_directory_gives_a_directory_with_names_redacted(tmp_path: Path) -> None:
    src = tmp_path / "logs"
    (src / "ip-10-0-3-17.ec2.internal").mkdir(parents=True)
    (src / "ip-10-0-3-17.ec2.internal" / "kubelet.log").write_text(LOG)
    (src / "values.yaml").write_text("greptime:\n  password: |\n    yaml-block-pw\n  user: admin\n")
    (src / "core.bin").write_bytes(b"\x00\x01password=hunter2x")
    os.symlink("/etc/passwd", src / "link")
    out = tmp_path / "clean"
    result = redact_path(src, out, Redactor(key=KEY))
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert len(files) == 2
    for name, data in files.items():
        _clean(name.encode())
        _clean(data)
        assert b"yaml-block-pw" not in data
    assert any("core.bin" in s for s in result.skipped) and any("link" in s for s in result.skipped)
    assert "values.yaml" in files and b"user: admin" in files["values.yaml"]


@pytest.mark.parametrize("kind", ["tar.gz", "tar.zst"])
def test_archive_gives_the_same_kind_of_archive(tmp_path: Path, kind: str) -> None:
    src = tmp_path / f"logs.{kind}"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in (
            ("a/ip-10-0-3-17/k.log", LOG.encode()),
            ("../evil.log", b"x"),
            ("/abs.log", b"y"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    src.write_bytes(
        gzip.compress(raw.getvalue()) if kind == "tar.gz" else zstd.compress(raw.getvalue())
    )
    out = tmp_path / f"clean.{kind}"
    result = redact_path(src, out, Redactor(key=KEY))
    members = _tar_members(out, "zst" if kind == "tar.zst" else "gz")
    assert len(members) == 1
    for name, data in members.items():
        _clean(name.encode())
        _clean(data)
    assert sorted(s.split(":")[0] for s in result.skipped) == ["../evil.log", "/abs.log"]


def test_bundle_is_redacted_like_the_collector_does(tmp_path: Path) -> None:
    # A bundle written without redaction worth the name (an old tf-collect, hand-made).
    src = tmp_path / "old.tar.zst"
    manifest = {
        "format_version": 1,
        "created_at": "2025-03-01T08:00:00Z",
        "artifacts": [
            {
                "id": "log",
                "type": "log",
                "status": "ok",
                "pod": "hypervisor-ip-10-0-3-17.ec2.internal",
                "paths": ["logs/tensor-fusion-sys/hypervisor-ip-10-0-3-17.ec2.internal/h.log"],
            },
            {
                "id": "pods",
                "type": "objects",
                "status": "ok",
                "paths": ["objects/pods/tensor-fusion-sys.json"],
            },
        ],
        "redaction": {"enabled": False, "counts": {}},
    }
    pods = {
        "kind": "PodList",
        "items": [
            {
                "metadata": {"name": "hypervisor-ip-10-0-3-17.ec2.internal"},
                "spec": {"containers": [{"env": [{"name": "TF_LICENSE", "value": "lic-abc-123"}]}]},
            }
        ],
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in (
            ("manifest.json", json.dumps(manifest).encode()),
            ("logs/tensor-fusion-sys/hypervisor-ip-10-0-3-17.ec2.internal/h.log", LOG.encode()),
            ("objects/pods/tensor-fusion-sys.json", json.dumps(pods).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    src.write_bytes(zstd.compress(raw.getvalue()))
    out = tmp_path / "clean.tar.zst"
    result = redact_path(src, out, Redactor(key=KEY))
    assert result.bundle
    with zstd.open(out, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
        names = [i.name for i in tar]
    assert names[0] == "manifest.json"
    members = _tar_members(out, "zst")
    for name, data in members.items():
        _clean(name.encode())
        _clean(data)
        assert b"lic-abc-123" not in data
    new_manifest = json.loads(members["manifest.json"])
    assert new_manifest["redaction"]["enabled"] is True
    assert new_manifest["redaction"]["counts"]["license"] == 1
    for art in new_manifest["artifacts"]:
        assert all(p in members for p in art["paths"])  # paths name the members as written
    assert members["objects/pods/tensor-fusion-sys.json"] == dump_json(
        json.loads(members["objects/pods/tensor-fusion-sys.json"])
    )


def test_never_overwrites_and_never_writes_outside(tmp_path: Path) -> None:
    src = tmp_path / "a.log"
    src.write_text(LOG)
    with pytest.raises(OutputError, match="overwrite the input"):
        redact_path(src, src, Redactor(key=KEY))
    existing = tmp_path / "exists.log"
    existing.write_text("keep me")
    with pytest.raises(OutputError, match="exists"):
        redact_path(src, existing, Redactor(key=KEY))
    assert existing.read_text() == "keep me"
    d = tmp_path / "dir"
    d.mkdir()
    (d / "x.log").write_text(LOG)
    with pytest.raises(OutputError, match="inside the input"):
        redact_path(d, d / "out", Redactor(key=KEY))
    with pytest.raises(OutputError, match=r"tar\.zst archive"):
        tgz = tmp_path / "b.tar.zst"
        tgz.write_bytes(zstd.compress(b""))
        redact_path(tgz, tmp_path / "b.clean.tar.gz", Redactor(key=KEY))
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(InputError):
        redact_path(broken, tmp_path / "c.tar.gz", Redactor(key=KEY))
    assert not (tmp_path / "c.tar.gz").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_writer_redacts_every_put_and_name(tmp_path: Path) -> None:
    writer = BundleWriter(tmp_path / "b.tar.zst", redactor=Redactor(key=KEY))
    writer.put("logs/ns/hypervisor-ip-10-0-3-17.ec2.internal/c.log", LOG.encode())
    writer.put_object(
        "objects/pods/ns.json", {"items": [{"env": [{"name": "API_TOKEN", "value": "tok-1234"}]}]}
    )
    staged = {
        p.relative_to(writer._staging).as_posix(): p.read_bytes()
        for p in writer._staging.rglob("*")
        if p.is_file()
    }
    writer.abort()
    assert len(staged) == 2
    for name, data in staged.items():
        _clean(name.encode())
        _clean(data)
        assert b"tok-1234" not in data


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return tf_collect(*args, cwd=cwd, timeout=60)


def test_cli_redact_and_collect_still_one_command(tmp_path: Path) -> None:
    src = tmp_path / "c.log"
    src.write_text(LOG)
    proc = _cli(
        "redact",
        str(src),
        "-o",
        str(tmp_path / "clean.log"),
        "--redaction-map",
        str(tmp_path / "map.json"),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "clean.log")
    assert "replaced" in proc.stderr and "hunter2x" not in proc.stderr
    _clean((tmp_path / "clean.log").read_bytes())
    assert json.loads((tmp_path / "map.json").read_text())["map"]["hunter2x"].startswith(
        "<redacted:password:"
    )
    again = _cli("redact", str(src), "-o", str(tmp_path / "clean.log"), cwd=tmp_path)
    assert again.returncode == 6 and "exists" in again.stderr
    missing = _cli(
        "redact", str(tmp_path / "nope.log"), "-o", str(tmp_path / "x.log"), cwd=tmp_path
    )
    assert missing.returncode == 2
    # The collect options still work without a subcommand.
    dry = _cli("--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "[baseline]" in dry.stdout
    help_ = _cli("--help", cwd=tmp_path)
    assert "--redaction-map" in help_.stdout and "redact" in help_.stdout
    bad = _cli(
        "--kubeconfig", str(tmp_path / "missing"), "-o", str(tmp_path / "b.tar.zst"), cwd=tmp_path
    )
    assert bad.returncode == 4
    inside = _cli(
        "--kubeconfig",
        str(tmp_path / "missing"),
        "-o",
        str(tmp_path / "b.tar.zst"),
        "--redaction-map",
        str(tmp_path / "b.tar.zst"),
        cwd=tmp_path,
    )
    assert inside.returncode in (4, 6)
