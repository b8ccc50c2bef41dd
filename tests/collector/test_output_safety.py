"""Whatever happens to the run or the disk, nothing half-written is left at the output path."""

from __future__ import annotations

import ctypes
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faultkit import FaultyEmulator
from scenariokit import SAMPLES, command, tf_collect
from scenarioloader import load_scenario

from emulator.server import Emulator


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory):
    with FaultyEmulator(load_scenario(SAMPLES / "healthy")) as emu:
        emu.kubeconfig = emu.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
        emu.faults.latency = 0.05  # a run of a couple of seconds, to interrupt anywhere in it
        yield emu


@pytest.mark.parametrize("seed", range(6))
def test_interrupt_at_a_random_point(emulator: Emulator, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    sig = rng.choice([signal.SIGINT, signal.SIGTERM])
    delay = rng.uniform(0.3, 2.5)  # from before the first request to the archive being written
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen(
        command("--kubeconfig", str(emulator.kubeconfig), "-o", str(out / "b.tar.zst")),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err
    if proc.returncode == 0:
        # Finished before the signal: then the bundle is complete, and alone.
        assert [p.name for p in out.iterdir()] == ["b.tar.zst"], (delay, err)
    else:
        assert proc.returncode == 130, (delay, err)
        assert list(out.iterdir()) == [], delay  # no bundle, no staging dir, no temp file
        assert err.strip().splitlines()[-1] == "tf-collect: interrupted; no bundle was written"


def _small_disk(limit: int):
    # RLIMIT_FSIZE makes a write past `limit` bytes fail with EFBIG, like a full disk
    # (Python ignores SIGXFSZ, so the process sees the error instead of dying).
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("limit", [2_000, 20_000])
def test_disk_full_is_a_clear_error_and_leaves_nothing(
    emulator: Emulator, tmp_path: Path, limit: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proc = tf_collect(
        "--kubeconfig", str(emulator.kubeconfig), "-o", str(out / "b.tar.zst"),
        timeout=120, preexec_fn=_small_disk(limit),
    )  # fmt: skip
    assert proc.returncode == 6, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tf-collect: cannot write") and "too large" in last.lower(), last
    assert list(out.iterdir()) == []


def test_output_path_that_is_a_directory(emulator: Emulator, tmp_path: Path) -> None:
    proc = tf_collect("--kubeconfig", str(emulator.kubeconfig), "-o", str(tmp_path))
    assert proc.returncode == 6  # the output policy's refusal, before anything runs
    assert proc.stderr.strip().splitlines()[-1] == (
        f"tf-collect: the bundle {tmp_path} exists and is a directory; choose another path"
    )
    assert list(tmp_path.iterdir()) == []


def _without_root_powers() -> None:
    # Root writes anywhere: drop the capabilities that let it ignore file modes
    # (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) from the bounding set, so the child is root
    # in name only.
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_output_directory_not_writable(emulator: Emulator, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    proc = tf_collect(
        "--kubeconfig", str(emulator.kubeconfig), "-o", str(out / "b.tar.zst"), timeout=120,
        preexec_fn=_without_root_powers if os.geteuid() == 0 else None,
    )  # fmt: skip
    out.chmod(0o755)
    assert proc.returncode == 6, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tf-collect: "), proc.stderr
    assert "not writable" in lines[0] and str(out) in lines[0], lines[0]
    assert list(out.iterdir()) == []


# tf-collect with a disk that fills up while the archive itself is written (after every member
# was staged): the archive's file object refuses bytes past LEFT with ENOSPC.
_FULL_WHILE_ARCHIVING = """
import errno, os, sys
LEFT = int(sys.argv.pop(1))
real_fdopen = os.fdopen
class Full:
    def __init__(self, f):
        self.f, self.left = f, LEFT
    def write(self, data):
        if len(data) > self.left:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.left -= len(data)
        return self.f.write(data)
    def __getattr__(self, name):
        return getattr(self.f, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
os.fdopen = lambda fd, mode="r", *a, **k: Full(real_fdopen(fd, mode, *a, **k)) if "w" in mode else real_fdopen(fd, mode, *a, **k)
from collector.entry import main
sys.argv[0] = "tf-collect"
main()
"""


@pytest.mark.parametrize("left", [0, 10_000])
def test_disk_full_while_the_archive_is_written(
    emulator: Emulator, tmp_path: Path, left: int
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_WHILE_ARCHIVING, str(left), "--kubeconfig",
         str(emulator.kubeconfig), "-o", str(out / "b.tar.zst")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 6, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tf-collect: cannot write") and "no space left" in last.lower(), last
    assert list(out.iterdir()) == []  # no partial bundle under the final name, no temp file
