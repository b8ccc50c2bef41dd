"""A wheel built from the repo, installed in a fresh virtualenv outside it, analyzes a sample.

This proves rules/, schemas/ and the manual ship inside the wheel and are found there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_installs_and_analyzes_a_sample(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(REPO),
        ],
        check=True,
        cwd=tmp_path,
        timeout=300,
    )
    [wheel] = dist.glob("tf_support-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, cwd=tmp_path, timeout=600
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    tf_analyze = env_dir / "bin" / "tf-analyze"
    sample = REPO / "sample_bundles" / "controller-oom.tar.zst"
    proc = subprocess.run(
        [str(tf_analyze), str(sample), "--format", "json", "-o", "r.json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((work / "r.json").read_text())
    assert [f["manual"] for f in report["findings"]] == [["controller-crash/oom-killed"]]
    # The installed package, not the source tree, answered.
    where = subprocess.run(
        [
            str(py),
            "-c",
            "import analyzer, tf_support_rules; "
            "print(analyzer.__file__); print(tf_support_rules.__file__)",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(REPO) not in where and "site-packages" in where
    proc = subprocess.run(
        [str(env_dir / "bin" / "tf-collect"), "--dry-run"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "baseline/tf-resources" in proc.stdout
