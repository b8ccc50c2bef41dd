"""On Python 3.14 the standard library's compression.zstd serves, and backports.zstd is not
installed (pyproject asks for it only before 3.14): every module of tf-collect and tf-analyze
must import, and a bundle must round-trip, with that alone.

A child interpreter plays that Python: `compression.zstd` is the backport's module under the
standard library's name (the backport exists to have the same API), and `backports` cannot be
imported at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PYTHON_314 = """
import importlib.abc, sys, types
from backports import zstd as real

compression = types.ModuleType("compression")
compression.__path__ = []
compression.zstd = real
sys.modules["compression"] = compression
sys.modules["compression.zstd"] = real
for name in [n for n in sys.modules if n == "backports" or n.startswith("backports.")]:
    del sys.modules[name]

class NoBackports(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "backports" or name.startswith("backports."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoBackports())
try:
    from backports import zstd
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("backports.zstd is still importable")
"""

ROUND_TRIP = """
import importlib, pkgutil, sys, tempfile
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[2]]

import analyzer, collector
for package in (collector, analyzer):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(".__main__"):  # that one runs the CLI
            importlib.import_module(module.name)
import analyzer.entry, collector.entry  # tf-analyze's and tf-collect's entry points

from tf_support_schemas import archive
assert archive.zstd is sys.modules["compression.zstd"]

from bundlekit import make_bundle, operator_pod
from analyzer.bundle import Bundle
from collector.budget import estimate
from collector.redact import Redactor
from collector.redact.offline import redact_path

LOG = "E0101 boom at 10.0.3.17\\n"
with tempfile.TemporaryDirectory() as tmp:
    path = make_bundle(
        Path(tmp) / "b.tar.zst",
        objects={("", "pods"): [operator_pod("tf-operator-0", "OOMKilled")]},
        logs={("tensor-fusion-sys", "tf-operator-0", "controller", False): LOG},
    )
    bundle = Bundle.open(path)
    assert [p["metadata"]["name"] for p in bundle.objects("pods")] == ["tf-operator-0"]
    redacted = redact_path(path, Path(tmp) / "clean.tar.zst", Redactor(key=b"k" * 32))
    assert redacted.bundle and Bundle.open(redacted.output).objects("pods")
    assert estimate(LOG.encode() * 100) > 0
print("ok")
"""


def test_tf_collect_and_tf_analyze_work_with_the_standard_librarys_zstd_alone() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PYTHON_314 + ROUND_TRIP, str(ROOT), str(ROOT / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
