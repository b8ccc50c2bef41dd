"""The house reads one way: collector -> bundle contract <- analyzer, the emulator beside them,
Kubernetes helpers in k8s/ and the output-path policy in outputs/, which import none of them. Files hold one thing each, and
process-wide switches live in the command-line entry points only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("analyzer", "collector", "emulator", "k8s", "outputs", "schemas")
# Modules that may import the emulator: `tf-analyze --serve` serves a bundle with it.
SERVES = {"analyzer/serve.py"}
# The one module of the collector that may call the analyzer on the bundle it just wrote.
SHOWS_FINDINGS = {"collector/cli.py"}
# The command lines: their console entry points and click commands.
ENTRY_POINTS = {"analyzer/entry.py", "analyzer/cli.py", "collector/entry.py", "collector/cli.py"}
MAX_LINES = 800


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imported(path: Path) -> set[str]:
    """The top-level packages a module imports (relative imports resolved)."""
    package = _rel(path).split("/")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(package if node.level else (node.module or "").split(".")[0])
    return found


ALLOWED = {
    "k8s": set(),
    "outputs": set(),
    "schemas": set(),
    "emulator": {"k8s"},
    "collector": {"k8s", "outputs", "tf_support_schemas"},
    "analyzer": {"k8s", "outputs", "tf_support_schemas", "tf_support_rules", "tf_support_manual"},
}
OURS = {"analyzer", "collector", "emulator", "k8s", "outputs", "schemas", "tf_support_schemas"}


@pytest.mark.parametrize("path", _sources(), ids=_rel)
def test_imports_point_one_way(path: Path) -> None:
    rel = _rel(path)
    package = rel.split("/")[0]
    allowed = ALLOWED[package] | {package}
    if rel in SERVES:
        allowed = allowed | {"emulator"}
    if rel in SHOWS_FINDINGS:
        allowed = allowed | {"analyzer"}
    assert (_imported(path) & OURS) - allowed == set()


def test_the_collector_reaches_the_analyzer_only_through_its_brief() -> None:
    for rel in SHOWS_FINDINGS:
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        modules = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("analyzer")
        }
        direct = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
            if alias.name.startswith("analyzer")
        ]
        assert modules == {"analyzer.brief"} and not direct, rel


@pytest.mark.parametrize("path", _sources(), ids=_rel)
def test_no_source_file_holds_more_than_it_should(path: Path) -> None:
    assert len(path.read_text("utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", _sources(), ids=_rel)
def test_process_wide_switches_live_in_the_entry_points(path: Path) -> None:
    if _rel(path) in ENTRY_POINTS:
        return
    calls = {
        f"{node.func.value.id}.{node.func.attr}"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    }
    switches = {"gc.disable", "gc.enable", "gc.freeze", "gc.unfreeze", "os._exit"}
    assert calls & switches == set()
