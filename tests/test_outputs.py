"""Nothing that exists at an output path is destroyed by surprise: tf-collect refuses an
existing bundle path unless --force and picks a new name by default, tf-analyze writes
reports to regular files only, --serve never takes over a kubeconfig, and no tool replaces a
device, a directory or a link or creates a missing directory."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from scenariokit import SAMPLES, tf_collect
from scenarioloader import load_scenario

import outputs
from emulator.server import Emulator

SAMPLE = SAMPLES / "healthy.tar.zst"


def _device(tmp_path: Path) -> Path:
    """A character device like /dev/null, made where replacing it by mistake harms nothing."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return dev


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


# ---------------------------------------------------------------- the policy


@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "symlink"])
def test_only_a_regular_file_is_ever_replaced(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep")
    path = {
        "device": lambda: _device(tmp_path),
        "fifo": lambda: _fifo(tmp_path),
        "directory": lambda: (tmp_path / "dir").mkdir() or tmp_path / "dir",
        "symlink": lambda: (tmp_path / "link").symlink_to(target) or tmp_path / "link",
    }[kind]()
    before = os.lstat(path)
    with pytest.raises(outputs.OutputRefused, match="exists and is a"):
        outputs.write(path, lambda fh: fh.write(b"new"), replace=True)
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert target.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({path.name, "target.txt"})


def test_an_existing_file_is_replaced_only_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("before")
    with pytest.raises(outputs.OutputRefused, match="already exists; use --force"):
        outputs.write(path, lambda fh: fh.write(b"after"), replace=False, force_hint="use --force")
    assert path.read_text() == "before"
    outputs.write(path, lambda fh: fh.write(b"after"), replace=True)
    assert path.read_text() == "after"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_a_name_taken_while_writing_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "bundle.tar.zst"

    def fill(fh) -> None:
        fh.write(b"ours")
        path.write_text("someone else's")  # appears between the check and the move

    with pytest.raises(outputs.OutputRefused, match="appeared while it was being written"):
        outputs.write(path, fill, replace=False)
    assert path.read_text() == "someone else's"
    assert [p.name for p in tmp_path.iterdir()] == ["bundle.tar.zst"]


def test_a_missing_directory_is_never_created(tmp_path: Path) -> None:
    with pytest.raises(outputs.OutputRefused, match="does not exist"):
        outputs.write(tmp_path / "no" / "such" / "r.md", lambda fh: None, replace=True)
    assert list(tmp_path.iterdir()) == []


def test_a_unique_name_never_takes_an_existing_one(tmp_path: Path) -> None:
    first = outputs.unique(tmp_path, "tf-support-ctx-20261204T000000Z", ".tar.zst")
    first.write_text("earlier")
    second = outputs.unique(tmp_path, "tf-support-ctx-20261204T000000Z", ".tar.zst")
    assert second.name == "tf-support-ctx-20261204T000000Z-2.tar.zst"


# ---------------------------------------------------------------- tf-collect


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory):
    with Emulator(load_scenario(SAMPLES / "healthy")) as emu:
        yield emu.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config", context="prod")


EPOCH = {"SOURCE_DATE_EPOCH": "1796342400"}  # 2026-12-04T00:00:00Z


def test_collect_picks_a_new_name_and_keeps_the_earlier_bundle(
    kubeconfig: Path, tmp_path: Path
) -> None:
    runs = [
        tf_collect("--kubeconfig", str(kubeconfig), env=EPOCH, cwd=tmp_path, timeout=120)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    names = [r.stdout.strip() for r in runs]
    assert names == [
        "tf-support-prod-20261204T000000Z.tar.zst",
        "tf-support-prod-20261204T000000Z-2.tar.zst",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)


def test_collect_refuses_an_existing_bundle_unless_forced(kubeconfig: Path, tmp_path: Path) -> None:
    before = tmp_path / "before.tar.zst"
    before.write_bytes(b"the bundle a --baseline needs")
    proc = tf_collect("--kubeconfig", str(kubeconfig), "-o", str(before), timeout=120)
    assert proc.returncode == 6
    assert proc.stderr.strip().splitlines()[-1] == (
        f"tf-collect: the bundle {before} already exists; use --force to replace it "
        "(it may be the bundle a --baseline needs)"
    )
    assert before.read_bytes() == b"the bundle a --baseline needs"
    forced = tf_collect("--kubeconfig", str(kubeconfig), "-o", str(before), "--force", timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert before.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame: the new bundle


def test_collect_never_writes_over_a_device_even_forced(kubeconfig: Path, tmp_path: Path) -> None:
    dev = _device(tmp_path)
    proc = tf_collect("--kubeconfig", str(kubeconfig), "-o", str(dev), "--force", timeout=120)
    assert proc.returncode == 6
    assert "exists and is a character device; choose another path" in proc.stderr
    assert "Bundle:" not in proc.stderr
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


# ---------------------------------------------------------------- tf-analyze


def _analyze(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analyzer", str(SAMPLE), *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip


def test_analyze_writes_reports_to_regular_files_only(tmp_path: Path) -> None:
    dev = _device(tmp_path)
    proc = _analyze("--format", "md", "-o", str(dev))
    assert proc.returncode == 4
    assert proc.stderr.strip() == (
        f"tf-analyze: the report {dev} exists and is a character device; choose another path"
    )
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    report = tmp_path / "report.md"
    report.write_text("an earlier report")
    assert _analyze("-o", str(report)).returncode == 0
    assert report.read_text().startswith("# ")  # replaced whole by the new report
    directory = tmp_path / "reports"
    directory.mkdir()
    proc = _analyze("--format", "md", "-o", str(directory))
    assert proc.returncode == 4
    assert proc.stderr.strip() == (
        f"tf-analyze: the report {directory} exists and is a directory; choose another path"
    )
    assert list(directory.iterdir()) == []
    stdout = _analyze("--format", "json", "-o", "-")
    assert stdout.returncode == 0 and stdout.stdout.startswith("{")


def test_serve_never_takes_over_a_kubeconfig_or_makes_a_directory(tmp_path: Path) -> None:
    taken = tmp_path / "tf-bundle.kubeconfig"
    taken.write_text("another server's kubeconfig")
    proc = _analyze("--serve", "--kubeconfig-out", str(taken))
    assert proc.returncode == 4
    assert proc.stderr.strip() == (
        f"tf-analyze: the kubeconfig {taken} already exists (another tf-analyze --serve may be "
        "using it); remove it or give --kubeconfig-out another path"
    )
    assert taken.read_text() == "another server's kubeconfig"
    missing = tmp_path / "no-such-dir" / "kubeconfig"
    proc = _analyze("--serve", "--kubeconfig-out", str(missing))
    assert proc.returncode == 4
    assert proc.stderr.strip() == (
        f"tf-analyze: the directory of the kubeconfig {missing} does not exist; give "
        "--kubeconfig-out another path"
    )
    assert not missing.parent.exists()


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _analyze("--serve", "--port", str(port), cwd=tmp_path)
    assert proc.returncode == 5
    assert proc.stderr.strip() == f"tf-analyze: cannot serve on port {port}: Address already in use"
    assert list(tmp_path.iterdir()) == []  # no kubeconfig left behind


# ---------------------------------------------------------------- a directory of files


def test_a_tree_appears_whole_and_never_replaces(tmp_path: Path) -> None:
    out = outputs.write_tree(tmp_path / "tree", {"a/b.txt": b"b", "c.txt": b"c"})
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.txt")) == ["a/b.txt", "c.txt"]
    with pytest.raises(outputs.OutputRefused, match="exists and is a directory"):
        outputs.write_tree(out, {"d.txt": b"d"})
    assert not (out / "d.txt").exists()
    with pytest.raises(outputs.OutputRefused, match="outside"):
        outputs.write_tree(tmp_path / "escape", {"../escaped.txt": b"x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]  # nothing staged is left
