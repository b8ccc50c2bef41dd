"""The size budget: over --max-size the oldest log lines go, objects and the manifest stay."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from scenariokit import tf_collect
from scenarioloader import load_scenario

from analyzer.bundle import Bundle
from collector.budget import LogSize, newest_lines, parse_size, plan_trim
from collector.errors import ConfigError
from collector.redact import KEY_ENV
from emulator.server import Emulator

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
NS = "tensor-fusion-sys"


def test_newest_lines_keeps_whole_lines_from_the_end() -> None:
    data = b"one\ntwo\nthree\n"
    assert newest_lines(data, 100) == (data, 0)
    assert newest_lines(data, 10) == (b"two\nthree\n", 1)
    assert newest_lines(data, 9) == (b"three\n", 2)
    assert newest_lines(data, 6) == (b"three\n", 2)
    assert newest_lines(data, 5) == (b"", 3)  # "three\n" alone does not fit
    assert newest_lines(b"a\nb\nc", 1) == (b"c", 2)  # no final newline


def test_plan_trim_cuts_the_largest_logs_to_one_cap() -> None:
    logs = {
        "small": LogSize(raw=1_000, compressed=100),
        "chatty": LogSize(raw=100_000, compressed=10_000),
        "medium": LogSize(raw=20_000, compressed=2_000),
    }
    assert plan_trim(0, logs, 1_000_000) == {}
    keep = plan_trim(fixed=1_000, logs=logs, max_size=5_000)
    # room 4,750 - 1,000 = 3,750; small keeps 100, the two others share 3,650: 1,825 each.
    assert keep == {"chatty": 18_250, "medium": 18_250}
    # Objects alone over the budget: every log goes.
    assert plan_trim(10_000, logs, 5_000) == {"small": 0, "chatty": 0, "medium": 0}


@pytest.mark.parametrize(
    ("text", "size"),
    [("20MB", 20_000_000), ("5MiB", 5 * 1024**2), ("800k", 800_000), ("1234", 1234), ("0", None)],
)
def test_parse_size(text: str, size: int | None) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "20 parsecs", "-1MB", ""])
def test_parse_size_rejects_nonsense(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_size(text)


def _noisy_log(seed: int, lines: int = 200) -> str:
    rng = random.Random(seed)
    # Random hex compresses about 2:1, like real logs full of ids: big enough to matter.
    return "".join(f"line {i:04d} {rng.randbytes(600).hex()}\n" for i in range(lines))


def test_over_budget_the_oldest_log_lines_go(tmp_path: Path) -> None:
    data = load_scenario(SAMPLES / "healthy")
    hypervisors = [
        key for key in data.logs if key.namespace == NS and key.pod.startswith("hypervisor")
    ]
    assert hypervisors
    for n, key in enumerate(hypervisors):
        data.logs[key] = _noisy_log(n)
    budget = 400_000
    with Emulator(data) as emu:
        kubeconfig = emu.write_kubeconfig(tmp_path / "kubeconfig")
        out = tmp_path / "b.tar.zst"
        # One key for both runs, so the two bundles name the same pods the same way.
        env = {KEY_ENV: "11" * 16}
        proc = tf_collect(
            "--kubeconfig", str(kubeconfig), "-o", str(out), "--max-size", str(budget), env=env
        )
        unlimited = tmp_path / "full.tar.zst"
        full = tf_collect(
            "--kubeconfig", str(kubeconfig), "-o", str(unlimited), "--max-size", "0", env=env
        )
    assert proc.returncode == 0, proc.stderr
    assert full.returncode == 0, full.stderr
    assert unlimited.stat().st_size > budget  # the budget really had to act
    assert out.stat().st_size <= budget
    assert "Left out the oldest" in proc.stderr and "--max-size" in proc.stderr

    bundle, whole = Bundle.open(out), Bundle.open(unlimited)
    assert bundle.manifest["options"]["max_size_bytes"] == budget
    assert whole.manifest["options"]["max_size_bytes"] is None
    trimmed = [a for a in bundle.manifest["artifacts"] if a.get("trimmed_lines")]
    assert trimmed and all(a["type"] == "log" and a["status"] == "truncated" for a in trimmed)
    for art in trimmed:
        where = (art["namespace"], art["pod"], art["container"], art["previous"], art.get("grep"))
        kept, all_lines = list(bundle.log(*where).lines), list(whole.log(*where).lines)
        # The newest lines, in order, with nothing made up: a suffix of the full log.
        assert kept and kept == all_lines[len(all_lines) - len(kept) :]
        assert len(kept) + art["trimmed_lines"] == len(all_lines)
        assert art["lines"] == len(kept)
        assert "oldest" in art["message"]
    # Objects are never trimmed.
    for group, resource in whole.resources():
        assert len(bundle.objects(resource, group=group)) == len(
            whole.objects(resource, group=group)
        )
