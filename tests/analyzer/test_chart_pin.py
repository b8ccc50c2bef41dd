"""A fix that runs `helm upgrade` (or `helm pull`) on TensorFusion's chart keeps the chart
version installed, so following it never upgrades the chart by accident (with --reuse-values
a newer chart would even get the old values).

The version is the chart of the Helm release in the bundle (`tf.chart_version`). When the
bundle holds no release, the pin stays, as a placeholder the user fills in
(`--version <installed-chart-version>`); bash refuses the command until they do.

Each rule whose commands touch the chart is held to the samples where it fires, as collected
(chart 1.8.7 of the `healthy` base), with the chart of the other base (`healthy-gke`, 1.8.3)
put in its Helm release, and with no Helm release collected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bundlekit import read_members

from analyzer.bundle import Bundle
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
RULES = load_rules()
KNOWN = {rule.id: rule.known for rule in RULES if rule.known is not None}
CHART = "tensor-fusion/tensor-fusion"
CHART_COMMAND = re.compile(r"\bhelm (upgrade|pull)\b[^|;&]*" + re.escape(CHART))
# Rules whose helm command is one branch of a choice: the Helm values that take that branch.
BRANCH_VALUES = {
    # helm upgrade is the fix when the Helm value itself is wrong (the sample's Deployment was
    # changed outside Helm: kubectl set env is its fix).
    "controller-crash/isolation-policy-invalid": {"controller": {"isolationModePolicy": "soft"}},
}
PINNING = sorted(
    (rule.id, scenario)
    for rule in RULES
    if any(CHART in c.source and "helm " in c.source for c in rule.commands)
    for scenario in rule.raw["scenarios"]["fires"]
)


def chart_version(bundle: Path) -> str:
    """The chart version of the Helm release a bundle holds, read from its member."""
    members = read_members(bundle)
    manifest = json.loads(members["manifest.json"])
    (helm,) = [a for a in manifest["artifacts"] if a["type"] == "helm"]
    return json.loads(members[helm["paths"][0]])["chart"]["version"]


def copy_with_release(
    bundle: Path, out: Path, version: str | None, values: dict[str, Any] | None = None
) -> Path:
    """An unpacked copy of `bundle` whose Helm release has chart `version` and `values` merged
    into its values (version None: the release could not be read, as when Secrets are
    forbidden)."""
    members = read_members(bundle)
    manifest = json.loads(members["manifest.json"])
    (helm,) = [a for a in manifest["artifacts"] if a["type"] == "helm"]
    (path,) = helm["paths"]
    if version is None:
        del members[path]
        helm.update(paths=[], status="forbidden", message='secrets is forbidden: User "x"')
    else:
        release = json.loads(members[path])
        release["chart"]["version"] = version
        for key, value in (values or {}).items():
            release["values"][key] = {**release["values"].get(key, {}), **value}
        members[path] = json.dumps(release).encode()
    members["manifest.json"] = json.dumps(manifest).encode()
    for name, data in members.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    return out


def sample(rule_id: str, scenario: str, out: Path, chart: str | None = "") -> Path:
    """The sample where the rule fires, its release's chart replaced by `chart` ("": kept,
    None: no release collected), with the values that take the branch of its helm command."""
    bundle = SAMPLES / f"{scenario}.tar.zst"
    if chart == "" and rule_id not in BRANCH_VALUES:
        return bundle
    version = chart_version(bundle) if chart == "" else chart
    return copy_with_release(bundle, out, version, BRANCH_VALUES.get(rule_id))


def chart_commands(bundle: Path, rule_id: str) -> list[str]:
    """The rule's own chart commands in its findings: not the upgrade a known bug's finding
    leads with (analyzer/rules/known.py), which moves to the chart that ships the fix on
    purpose: it sets nothing but the operator image, if that."""
    findings = [f for f in analyze(Bundle.open(bundle), RULES).findings() if f.rule_id == rule_id]
    assert findings, f"{rule_id} does not fire on {bundle.name}"
    return [
        c
        for f in findings
        for c in f.commands
        if CHART_COMMAND.search(c) and not (f.rule_id in KNOWN and _fix(c))
    ]


def _fix(command: str) -> bool:
    return command.endswith(" --reuse-values") or "--set controller.image.tag=" in command


def test_the_rules_that_touch_the_chart_are_found() -> None:
    rules = {rule_id for rule_id, _ in PINNING}
    assert {"controller-crash/oom-killed", "image-pull/mainland-china"} <= rules
    assert len(rules) == 13


@pytest.mark.parametrize(("rule_id", "scenario"), PINNING)
def test_helm_commands_pin_the_installed_chart(rule_id: str, scenario: str, tmp_path) -> None:
    installed = chart_version(SAMPLES / f"{scenario}.tar.zst")
    commands = chart_commands(sample(rule_id, scenario, tmp_path), rule_id)
    assert commands
    for command in commands:
        assert f"{CHART} --version {installed} " in command + " ", command


@pytest.mark.parametrize(
    ("rule_id", "scenario"),
    # A defect of a chart's defaults is fixed in 1.8.3 or before: it no longer fires there.
    [(r, s) for r, s in PINNING if r not in KNOWN or KNOWN[r].component != "chart"],
)
def test_the_pin_follows_the_chart_in_the_bundle(rule_id: str, scenario: str, tmp_path) -> None:
    other = chart_version(SAMPLES / "healthy-gke.tar.zst")
    assert other == "1.8.3" and other != chart_version(SAMPLES / f"{scenario}.tar.zst")
    commands = chart_commands(sample(rule_id, scenario, tmp_path, other), rule_id)
    assert commands
    for command in commands:
        assert f"{CHART} --version 1.8.3 " in command + " ", command


@pytest.mark.parametrize(("rule_id", "scenario"), PINNING)
def test_without_the_release_the_pin_is_for_the_user_to_fill_in(
    rule_id: str, scenario: str, tmp_path
) -> None:
    bundle = sample(rule_id, scenario, tmp_path, None)
    assert Bundle.open(bundle).document("helm")[1] == "forbidden"
    commands = chart_commands(bundle, rule_id)
    assert commands
    for command in commands:
        assert f"{CHART} --version <installed-chart-version> " in command + " ", command


def test_an_example_reads_as_a_user_would_paste_it() -> None:
    (command,) = chart_commands(SAMPLES / "controller-oom.tar.zst", "controller-crash/oom-killed")
    assert command == (
        "helm upgrade tensor-fusion-sys tensor-fusion/tensor-fusion --version 1.8.7"
        " -n tensor-fusion-sys --reuse-values --set controller.resources.limits.memory=1024Mi"
    )
