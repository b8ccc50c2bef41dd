"""The runtime dependencies are the design card's packages plus a short list, each with its
reason, and every third-party package the product imports is declared."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("analyzer", "collector", "emulator", "k8s", "outputs", "schemas")
FIRST_PARTY = {"analyzer", "collector", "emulator", "k8s", "outputs"} | {
    "tf_support_schemas",
    "tf_support_rules",
    "tf_support_manual",
}

# The design card's runtime packages (zstd through backports.zstd before Python 3.14).
CARD = {"click", "kubernetes", "pyyaml", "jsonschema", "jinja2", "backports-zstd"}
# Beyond the card, and why.
EXTRAS = {
    # jsonschema checks the `date-time` format (a manifest's created_at) only with it.
    "rfc3339-validator",
    # analyzer/report/render.py marks the HTML report's inline script safe (jinja2 needs it too).
    "markupsafe",
    # tf-collect's live progress bar on a terminal.
    "rich",
    # Imported by the collector beside the kubernetes client, which depends on both.
    "urllib3",
    "websocket-client",
    # schemas/tokens.py finds every token format's prefix in one scan.
    "google-re2",
}
# Import name -> distribution; None for a module of the standard library not listed in
# sys.stdlib_module_names of older Pythons.
DISTRIBUTION = {
    "backports": "backports-zstd",
    "click": "click",
    "compression": None,  # Python 3.14's compression.zstd
    "jinja2": "jinja2",
    "jsonschema": "jsonschema",
    "kubernetes": "kubernetes",
    "markupsafe": "markupsafe",
    "re2": "google-re2",
    "rich": "rich",
    "urllib3": "urllib3",
    "websocket": "websocket-client",
    "yaml": "pyyaml",
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = [Requirement(text) for text in project["dependencies"]]
    return {_normal(r.name): r for r in requirements}


def _third_party_imports() -> dict[str, str]:
    """Each top-level module the product imports from outside itself and the standard
    library, with one file that imports it."""
    found: dict[str, str] = {}
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in FIRST_PARTY or top == "__future__":
                        continue
                    found.setdefault(top, path.relative_to(ROOT).as_posix())
    return found


def test_dependencies_are_the_card_and_the_justified_extras() -> None:
    assert set(_declared()) == CARD | EXTRAS


def test_every_third_party_import_is_declared() -> None:
    declared = _declared()
    for module, where in sorted(_third_party_imports().items()):
        assert module in DISTRIBUTION, f"{where} imports {module}: map it to its distribution"
        dist = DISTRIBUTION[module]
        assert dist is None or dist in declared, f"{where} imports {module}, from undeclared {dist}"


def test_the_zstd_backport_is_only_for_pythons_without_compression_zstd() -> None:
    marker = _declared()["backports-zstd"].marker
    assert marker is not None
    assert marker.evaluate({"python_version": "3.13"})
    assert not marker.evaluate({"python_version": "3.14"})
