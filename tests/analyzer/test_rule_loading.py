"""Invalid rules stop loading with a message naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer.errors import RuleLoadError
from analyzer.rules.loading import default_rules_dir, load_rules
from tf_support_schemas.manual import load_manual

GOOD = {
    "id": "controller-crash/oom-killed",
    "manual": ["controller-crash/oom-killed"],
    "severity": "critical",
    "for_each": {"resource": "pods", "namespace": "tf", "as": "pod"},
    "when": "has(pod.status)",
    "title": {"en": "t {{ object.name }}", "zh": "t"},
    "explanation": {"en": "e", "zh": "e"},
    "fix": {"en": "f", "zh": "f"},
}


def _write(root: Path, data: dict, name: str = "controller-crash/oom-killed.yaml") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return root


def test_good_rule_loads(tmp_path: Path) -> None:
    rules = load_rules(_write(tmp_path, GOOD))
    assert [r.id for r in rules] == ["controller-crash/oom-killed"]
    assert rules[0].section == "controller-crash"


BAD = {
    "unknown field": (
        {**GOOD, "whenn": "true"},
        "(root): Additional properties are not allowed ('whenn' was unexpected)",
    ),
    "missing zh": ({**GOOD, "title": {"en": "x"}}, "title: 'zh' is a required property"),
    "bad severity": ({**GOOD, "severity": "fatal"}, "severity: 'fatal' is not one of ['critical'"),
    "id not file name": ({**GOOD, "id": "controller-crash/other"}, "must match the file name"),
    "unknown manual key": (
        {**GOOD, "manual": ["controller-crash/nope"]},
        "manual: unknown manual row key 'controller-crash/nope'",
    ),
    "cel syntax": ({**GOOD, "when": "pod.status +"}, "when: invalid CEL"),
    "unknown variable": ({**GOOD, "when": "pods.size() > 0"}, "when: unknown name(s) pods"),
    "template variable": (
        {**GOOD, "fix": {"en": "{{ nope }}", "zh": "x"}},
        "fix.en: unknown template variable(s) nope",
    ),
    "template variable in a branch": (
        {**GOOD, "fix": {"en": "{% if object.name %}{{ nope }}{% endif %}", "zh": "x"}},
        "fix.en: unknown template variable(s) nope",
    ),
    "template syntax": ({**GOOD, "fix": {"en": "{% if %}", "zh": "x"}}, "fix.en: invalid template"),
    "logs of non-subject": (
        {**GOOD, "with": {"log": {"logs": "other"}}},
        "with.log: 'other' is not the for_each subject nor a binding of pods with `where`",
    ),
    "logs of pods not picked per subject": (
        {**GOOD, "with": {"others": {"objects": "pods"}, "log": {"logs": "others"}}},
        "with.log: 'others' is not the for_each subject",
    ),
    "let reads a later let": (
        {**GOOD, "let": {"a": "b + 1", "b": "1"}},
        "let.a: unknown name(s) b",
    ),
    "let shadows a binding": (
        {**GOOD, "let": {"pod": "1"}},
        "let.pod: the name is already bound",
    ),
    "let is invalid CEL": ({**GOOD, "let": {"a": "1 +"}}, "let.a: invalid CEL"),
    "unknown function": ({**GOOD, "when": "nosuch(pod)"}, "undeclared function 'nosuch'"),
}


def test_names_a_template_binds_itself_are_known(tmp_path: Path) -> None:
    text = "{% for x in xs %}{{ loop.index }}: {{ x }}{% endfor %}{% set y = 1 %}{{ y }}"
    data = {**GOOD, "vars": {"xs": "[1, 2]"}, "fix": {"en": text, "zh": "x"}}
    (rule,) = load_rules(_write(tmp_path, data))
    assert rule.texts["fix"]["en"].render({"xs": [5, 6]}) == "1: 52: 61"


def test_logs_of_the_pods_a_where_binding_picks_load(tmp_path: Path) -> None:
    picked = {"objects": "pods", "where": {"spec.nodeName": "pod.spec.nodeName"}}
    data = {**GOOD, "with": {"peers": picked, "log": {"logs": "peers"}}, "when": "log.size() > 0"}
    (rule,) = load_rules(_write(tmp_path, data))
    assert rule.bindings["log"] == {"logs": "peers"}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_rule_names_file_and_field(tmp_path: Path, case: str) -> None:
    data, words = BAD[case]
    with pytest.raises(RuleLoadError) as err:
        load_rules(_write(tmp_path, data))
    assert str(err.value).startswith("controller-crash/oom-killed.yaml: ")
    assert words in str(err.value)


def test_yaml_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("id: [unclosed\n")
    with pytest.raises(RuleLoadError, match=r"^x.yaml: not valid YAML"):
        load_rules(tmp_path)


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuleLoadError, match="no rules"):
        load_rules(tmp_path)


def test_shipped_rules_cite_real_manual_keys() -> None:
    manual = load_manual()
    rules = load_rules(default_rules_dir())
    assert {r.id for r in rules} >= {
        "controller-crash/oom-killed",
        "controller-crash/global-config-invalid",
        "pod-pending/quota-or-capacity",
    }
    for rule in rules:
        assert set(rule.manual) <= set(manual.rows)


def test_unsafe_yaml_tag_is_refused_at_load(tmp_path: Path) -> None:
    # PyYAML's unsafe tags would run code; the safe loader refuses them.
    good = yaml.safe_dump({k: v for k, v in GOOD.items() if k != "when"}, allow_unicode=True)
    path = tmp_path / "controller-crash" / "oom-killed.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(good + "when: !!python/object/apply:os.system ['touch /tmp/tf-pwned']\n")
    with pytest.raises(RuleLoadError) as err:
        load_rules(tmp_path)
    assert "oom-killed.yaml" in str(err.value)
    assert not Path("/tmp/tf-pwned").exists()


HOSTILE = {
    # CEL has no file, process or Python access: such functions do not exist.
    "cel file access": {"when": 'open("/etc/hostname") != ""'},
    "cel python escape": {"when": '__import__("os").system("touch /tmp/tf-pwned") == 0'},
    # The Jinja sandbox refuses walks into Python internals.
    "template internals": {
        "title": {"en": "{{ object.__class__.__mro__[1].__subclasses__() }}", "zh": "t"}
    },
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_rule_is_refused_or_errors_and_the_run_goes_on(tmp_path: Path, case: str) -> None:
    import shutil

    from bundlekit import make_bundle, operator_pod

    from analyzer.bundle import Bundle
    from analyzer.rules.engine import analyze

    rules = _write(
        tmp_path / "rules", {**GOOD, **HOSTILE[case]}, "controller-crash/crd-outdated.yaml"
    )
    bad = yaml.safe_load((rules / "controller-crash/crd-outdated.yaml").read_text())
    bad.update(id="controller-crash/crd-outdated", manual=["controller-crash/crd-outdated"])
    _write(rules, bad, "controller-crash/crd-outdated.yaml")
    shutil.copy(
        default_rules_dir() / "controller-crash" / "oom-killed.yaml", rules / "controller-crash"
    )
    bundle = make_bundle(
        tmp_path / "b.tar.zst",
        objects={("", "pods"): [operator_pod("tensor-fusion-sys-controller-1", "OOMKilled")]},
    )
    try:
        loaded = load_rules(rules)
    except RuleLoadError as exc:  # refused before anything ran: as good
        assert "crd-outdated.yaml" in str(exc)
        return
    results = {r.rule_id: r for r in analyze(Bundle.open(bundle), loaded).results}
    assert results["controller-crash/crd-outdated"].outcome == "error"
    assert results["controller-crash/oom-killed"].outcome == "fired"  # the run went on
    assert not Path("/tmp/tf-pwned").exists()
