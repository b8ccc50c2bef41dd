"""Every string the report shows exists in English and Chinese.

The keys come from where they are used: the templates (through Jinja's own parser, so
`t.name`, `t["name"]` and `t["prefix_" + value]` are all seen) and the Python that formats
reports; a key built from a value is checked for every value it can take.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import jinja2
from jinja2 import nodes

from analyzer import brief
from analyzer.i18n import STRINGS
from analyzer.report import markdown, render, terminal
from analyzer.report.views import LINK_REASONS, LINK_STATES, LINKS
from analyzer.results import OUTCOMES, ROLES, SEVERITIES
from analyzer.verdict import VERDICTS

TEMPLATES = resources.files("analyzer.report").joinpath("templates")
# Values a key may be built from, by the text before the value ("" for t[value]).
DYNAMIC = {
    "": (*SEVERITIES, *OUTCOMES, *ROLES),
    "state_": LINK_STATES,
    "link_": LINKS,
    "reason_": LINK_REASONS,
    "verdict_": VERDICTS,
}
_PY_KEY = re.compile(r"""\b(?:t|strings)\[\s*['"]([a-z_]+)['"]\s*\]""")
_PY_PREFIX = re.compile(r"""\b(?:t|strings)\[\s*['"]([a-z_]+)['"]\s*\+""")
# t.plural(n, "name") reads "name", and "name_one" where the language has it.
_PY_PLURAL = re.compile(r"""\bt\.plural\([^,()]+(?:\[[^]]*\])?,\s*['"]([a-z_]+)['"]\)""")


def _template_keys(source: str) -> tuple[set[str], set[str]]:
    """(literal keys, prefixes of built keys) used on `t` in one template."""
    tree = jinja2.Environment().parse(source)
    keys: set[str] = set()
    prefixes: set[str] = set()
    plural = set()
    for call in tree.find_all(nodes.Call):
        fn = call.node
        if isinstance(fn, nodes.Getattr) and fn.attr == "plural":
            plural.add(id(fn))
            if len(call.args) == 2 and isinstance(call.args[1], nodes.Const):
                keys.add(call.args[1].value)
            else:
                prefixes.add("")
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        if not (isinstance(node.node, nodes.Name) and node.node.name == "t"):
            continue
        if id(node) in plural:
            continue
        if isinstance(node, nodes.Getattr):
            keys.add(node.attr)
        elif isinstance(node.arg, nodes.Const):
            keys.add(node.arg.value)
        elif isinstance(node.arg, nodes.Add) and isinstance(node.arg.left, nodes.Const):
            prefixes.add(node.arg.left.value)
        else:
            prefixes.add("")
    return keys, prefixes


def used_keys() -> set[str]:
    keys: set[str] = set()
    prefixes: set[str] = set()
    for entry in TEMPLATES.iterdir():
        if entry.name.endswith(".j2"):
            k, p = _template_keys(entry.read_text("utf-8"))
            keys |= k
            prefixes |= p
    for module in (render, terminal, markdown, brief):
        text = Path(module.__file__).read_text("utf-8")
        keys |= set(_PY_KEY.findall(text))
        prefixes |= set(_PY_PREFIX.findall(text))
        keys |= set(_PY_PLURAL.findall(text))
    unknown = prefixes - set(DYNAMIC)
    assert not unknown, f"keys built from values this test does not know: {unknown}"
    for prefix in prefixes:
        keys |= {prefix + value for value in DYNAMIC[prefix]}
    # The singular of a counted word is optional in a table, and used where it is present.
    return keys | {k + "_one" for k in keys if any(k + "_one" in t for t in STRINGS.values())}


def missing_translations() -> dict[str, list[str]]:
    used = used_keys()
    assert len(used) > 50  # the walk found the templates
    return {lang: sorted(used - set(table)) for lang, table in STRINGS.items() if used - set(table)}


def test_every_used_string_exists_in_both_languages() -> None:
    assert missing_translations() == {}


def test_both_tables_have_the_same_keys_and_no_dead_or_empty_ones() -> None:
    en, zh = STRINGS["en"], STRINGS["zh"]
    assert sorted(set(en) ^ set(zh)) == []
    assert sorted(set(en) - used_keys()) == []
    assert [k for k, v in {**en, **zh}.items() if not v.strip()] == []


def test_format_strings_take_the_same_arguments() -> None:
    spec = re.compile(r"%[sd]|\{[a-z]+\}")
    for key, text in STRINGS["en"].items():
        assert sorted(spec.findall(text)) == sorted(spec.findall(STRINGS["zh"][key])), key


def test_a_missing_translation_is_caught(monkeypatch) -> None:
    monkeypatch.delitem(STRINGS["zh"], "capacity")  # used by the HTML template only
    monkeypatch.delitem(STRINGS["en"], "reason_not_labelled")  # built from a value
    assert missing_translations() == {"en": ["reason_not_labelled"], "zh": ["capacity"]}
