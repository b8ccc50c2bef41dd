"""`tf-analyze NEW --baseline OLD`: which findings were fixed, are new, or remain.

Driven through the command line (in-process: samplekit.tf_analyze) on the sample bundles; a bad baseline gets the same
one-line message and exit code as a bad main bundle, and the message says it was the baseline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samplekit import tf_analyze

from analyzer.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "sample_bundles" / "healthy.tar.zst"
BAD_CONFIG = ROOT / "sample_bundles" / "controller-bad-config.tar.zst"
CONFIG_FINDING = (
    "controller-crash/global-config-invalid@"
    "Pod/tensor-fusion-sys/tensor-fusion-sys-controller-6b8f9d7c54-l7qzt"
)


def compare(new: Path, old: Path, tmp_path: Path) -> dict:
    out = tmp_path / "report.json"
    proc = tf_analyze(new, "--baseline", old, "--lang", "en", "-o", out, cwd=tmp_path)
    assert proc.returncode == ExitCode.OK, proc.stderr
    return json.loads(out.read_text("utf-8"))


def ids(entries: list[dict]) -> list[str]:
    return [e["id"] for e in entries]


def test_a_fixed_config_is_reported_fixed(tmp_path: Path) -> None:
    c = compare(HEALTHY, BAD_CONFIG, tmp_path)["comparison"]
    assert c["baseline"] == {
        "source": "controller-bad-config.tar.zst",
        "created_at": "2026-11-30T10:10:00Z",
    }
    assert ids(c["fixed"]) == [CONFIG_FINDING]
    assert c["fixed"][0]["rule_id"] == "controller-crash/global-config-invalid"
    assert "dynamicConfig" in c["fixed"][0]["title"]
    assert (c["new"], c["remaining"]) == ([], [])


def test_a_broken_config_is_reported_new(tmp_path: Path) -> None:
    report = compare(BAD_CONFIG, HEALTHY, tmp_path)
    c = report["comparison"]
    assert (c["fixed"], ids(c["new"]), c["remaining"]) == ([], [CONFIG_FINDING], [])
    assert c["new"][0]["title"] == report["findings"][0]["title"]


def test_the_same_bundle_twice_leaves_every_finding_remaining(tmp_path: Path) -> None:
    report = compare(BAD_CONFIG, BAD_CONFIG, tmp_path)
    c = report["comparison"]
    assert (c["fixed"], c["new"]) == ([], [])
    assert ids(c["remaining"]) == sorted(f["id"] for f in report["findings"]) == [CONFIG_FINDING]


def test_without_baseline_the_report_has_no_comparison(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert tf_analyze(BAD_CONFIG, "-o", out, cwd=tmp_path).returncode == ExitCode.OK
    assert "comparison" not in json.loads(out.read_text("utf-8"))


def test_markdown_and_html_show_the_comparison_after_the_summary(tmp_path: Path) -> None:
    for fmt, heading in (("md", "## "), ("html", "<h2>")):
        out = tmp_path / f"report.{fmt}"
        proc = tf_analyze(
            HEALTHY, "--baseline", BAD_CONFIG, "-o", out, "--lang", "en", cwd=tmp_path
        )
        assert proc.returncode == ExitCode.OK, proc.stderr
        text = out.read_text("utf-8")
        summary, comparison, views = (
            text.index(heading + "Summary"),
            text.index(heading + "Compared with an earlier bundle"),
            text.index(heading + "Cluster at collection time"),
        )
        assert summary < comparison < views
        fixed = text.index("Fixed (only in the earlier bundle)")
        assert fixed < text.index(CONFIG_FINDING) < text.index("New (only in this bundle)")


def _truncated(tmp: Path) -> Path:
    path = tmp / "cut.tar.zst"
    data = BAD_CONFIG.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _not_zstd(tmp: Path) -> Path:
    path = tmp / "notes.tar.zst"
    path.write_text("not a bundle\n")
    return path


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda tmp: tmp / "missing.tar.zst", ExitCode.NOT_A_BUNDLE),
        (_not_zstd, ExitCode.NOT_A_BUNDLE),
        (_truncated, ExitCode.TRUNCATED),
    ],
    ids=["missing", "not-zstd", "truncated"],
)
def test_a_bad_baseline_fails_like_a_bad_bundle_and_says_which(make, code, tmp_path: Path) -> None:
    bad = make(tmp_path)
    as_baseline = tf_analyze(HEALTHY, "--baseline", bad.name, "-o", "r.json", cwd=tmp_path)
    as_bundle = tf_analyze(bad.name, "-o", "r.json", cwd=tmp_path)
    assert as_baseline.returncode == as_bundle.returncode == code
    assert as_bundle.stderr.startswith(f"tf-analyze: {bad.name}")
    assert as_baseline.stderr == as_bundle.stderr.replace("tf-analyze: ", "tf-analyze: baseline ")
    assert as_baseline.stderr.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


def test_baseline_does_not_go_with_serve(tmp_path: Path) -> None:
    proc = tf_analyze(HEALTHY, "--serve", "--baseline", BAD_CONFIG, cwd=tmp_path)
    assert proc.returncode == ExitCode.USAGE
    assert "--baseline" in proc.stderr


def _rejections(path: Path, *names: str) -> Path:
    from bundlekit import make_bundle

    message = (
        'Error creating: admission webhook "mpod.tensor-fusion.ai" denied the request: '
        "parse tf resources: gpu pool not found"
    )
    events = [
        {
            "kind": "Event",
            "metadata": {"namespace": "ml", "name": name},
            "type": "Warning",
            "reason": "FailedCreate",
            "count": 3,
            "message": f"{message} ({name})",
            "involvedObject": {"kind": "ReplicaSet", "namespace": "ml", "name": "train-6f7c9d8b5"},
        }
        for name in names
    ]
    return make_bundle(path, objects={("", "events"): events})


def test_a_rejection_seen_again_under_new_event_names_remains(tmp_path: Path) -> None:
    # Each occurrence of an Event has a new name: the finding is about the ReplicaSet.
    old = _rejections(tmp_path / "old.tar.zst", "train-6f7c9d8b5.18ecc94e0173a153")
    new = _rejections(
        tmp_path / "new.tar.zst", "train-6f7c9d8b5.18ecd0a1b2c3d4e5", "train-6f7c9d8b5.18ecd0ffee00"
    )
    report = compare(new, old, tmp_path)
    c = report["comparison"]
    finding = "webhook-rejects/pool-not-found@ReplicaSet/ml/train-6f7c9d8b5"
    # (a bundle of events only: no pods or Deployments listed, so no claim about a controller)
    assert [e["id"] for e in c["remaining"]] == [finding]
    assert c["fixed"] == c["new"] == []
    # Two Events about one ReplicaSet are one finding, with the evidence of both.
    (f,) = [f for f in report["findings"] if f["id"] == finding]
    assert f["objects"] == ["ReplicaSet/ml/train-6f7c9d8b5"]
    assert [e.endswith(("18ecd0a1b2c3d4e5)", "18ecd0ffee00)")) for e in f["evidence"]] == [
        True,
        True,
    ]
