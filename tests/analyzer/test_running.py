"""What runs: each component's version from the strongest witness, and the header that says
it (and where the witnesses disagree) in every format and both languages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from samplekit import SAMPLES, members, report
from scenarioloader import scenario_names
from variantkit import Variant
from versionkit import retag

from analyzer import run
from analyzer.report.render import render
from analyzer.report.terminal import summary_lines
from k8s.images import parse_image
from k8s.semver import parse

OPERATOR = "tensorfusion/tensor-fusion-operator"
HYPERVISOR = "tensorfusion/tensor-fusion-hypervisor"
V2_16_3 = b"c27d0e1e65dae90024e2f2fe8af16682eb05c63a"  # the commit tag v2.16.3 names


def analyse(found: dict[str, bytes], tmp: Path, lang: str = "en") -> dict[str, Any]:
    directory = Variant(found).write(tmp / lang)
    return run.run_analysis(run.AnalyzeOptions(bundle=directory, lang=lang)).report


def component(shown: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in shown["running"]["components"] if c["name"] == name)


def operator_tags(name: str) -> set[str]:
    """The operator image tags the sample's pods run."""
    tags = set()
    for member, data in members(name).items():
        if member.startswith("objects/pods/"):
            for pod in json.loads(data)["items"]:
                for c in pod["spec"].get("containers", []):
                    image = parse_image(c.get("image", ""))
                    if image.name == "tensor-fusion-operator":
                        tags.add(image.tag)
    return tags


@pytest.mark.parametrize("name", scenario_names(SAMPLES))
def test_every_sample_says_which_operator_runs(name: str) -> None:
    shown = report(name)
    tags = operator_tags(name)
    operators = [c for c in shown["running"]["components"] if c["name"] == "operator"]
    if not tags:  # no operator pod: only Helm may say, and then from the chart
        assert all(c["source"].startswith("helm-") for c in operators), name
        return
    (operator,) = operators
    versions = {str(parse(t)) for t in tags if parse(t)}
    if versions:
        assert operator["version"] in versions, name
        assert operator["source"] in ("start-line", "image-tag"), name
    elif operator["source"] != "start-line":  # latest: no number, unless it logged one
        assert operator["version"] == ""
        assert "unknown (latest" in operator["text"]
    for c in shown["running"]["components"]:
        floating = [r for r in c["readings"] if parse_image(r["text"]).floating]
        if floating and len(floating) == len(c["readings"]):
            assert c["version"] == "", (name, c["name"])


def test_the_start_line_outranks_the_tag_and_names_the_release() -> None:
    shown = report("healthy")
    assert component(shown, "operator")["source"] == "start-line"
    hv = component(shown, "hypervisor")
    # Its release build logs no version: the commit names the release.
    assert hv["version"] == "2.15.0"
    assert "its start line names only commit 27130cab (v2.15.0)" in hv["text"]
    assert component(shown, "greptimedb")["text"].startswith(
        "greptimedb unknown (latest, pulled 2026-11-30, digest sha256:"
    )


def test_latest_is_unknown_never_a_number(tmp_path: Path) -> None:
    found = retag(members("healthy"), {OPERATOR: "latest"}, start_lines=False)
    operator = component(analyse(found, tmp_path), "operator")
    assert operator["version"] == ""
    assert operator["text"].startswith("operator unknown (latest, pulled 2026-11-30, digest ")
    # The same image that logged its version at start is known again.
    found = retag(members("healthy"), {OPERATOR: "latest"})
    operator = component(analyse(found, tmp_path / "logged"), "operator")
    assert (operator["version"], operator["source"]) == ("2.17.0", "start-line")


def test_a_chart_that_pins_an_older_operator_says_so_in_every_format() -> None:
    for lang, words in (
        (
            "en",
            "chart 1.7.6 (appVersion 1.58.4) runs operator 1.48.6: the chart pins an older operator",
        ),
        (
            "zh",
            "chart 1.7.6（appVersion 1.58.4）运行的是 operator 1.48.6：该 chart 固定了更旧的 operator",
        ),
    ):
        shown = report("known-controller-concurrent-map-fatal", lang)
        assert shown["running"]["notes"] == [words]
        assert component(shown, "operator")["version"] == "1.48.6"
        assert words in render(shown, "md")
        assert words in render(shown, "html")
        assert words in render(shown, "json")
        assert f"  ! {words}" in summary_lines(shown)


def test_the_v1_to_v2_upgrade_by_the_book_is_expected(tmp_path: Path) -> None:
    # docs/v1-to-v2-upgrade-best-practice.md: helm list keeps showing the old chart.
    chart = {"name": "tensor-fusion", "version": "1.7.6", "appVersion": "1.58.4"}
    found = retag(members("healthy"), {OPERATOR: "2.15.0"}, helm={"chart": chart, "values": {}})
    shown = analyse(found, tmp_path)
    assert component(shown, "operator")["version"] == "2.15.0"
    assert shown["running"]["notes"] == [
        "chart 1.7.6 (appVersion 1.58.4) runs operator 2.15.0: expected after the v1 -> v2 "
        "upgrade done by the book, which leaves helm list on the old chart"
    ]


def test_a_hypervisor_older_than_the_operator(tmp_path: Path) -> None:
    assert report("healthy")["running"]["notes"] == [
        "hypervisor 2.15.0 is older than operator 2.17.0: chart 1.8.7 keeps hypervisor 2.15.0 "
        "(cluster.hypervisorImage)"
    ]
    found = retag(members("healthy"), {HYPERVISOR: "2.14.0"})
    shown = analyse(found, tmp_path)
    assert component(shown, "hypervisor")["version"] == "2.14.0"
    assert "hypervisor 2.14.0 is older than operator 2.17.0" in shown["running"]["notes"]


def test_pods_on_different_versions(tmp_path: Path) -> None:
    found = dict(members("healthy"))
    listing = json.loads(found["objects/pods/tensor-fusion-sys.json"])
    pods = [p for p in listing["items"] if p["metadata"]["name"].startswith("hypervisor-")]
    for c in pods[0]["spec"]["containers"]:
        c["image"] = c["image"].replace(":2.15.0", ":2.16.3")
    found["objects/pods/tensor-fusion-sys.json"] = json.dumps(listing).encode()
    pod = pods[0]["metadata"]["name"]
    where = f"Pod/tensor-fusion-sys/{pod}/tensor-fusion-hypervisor"
    # The start line outranks the tag: a retagged old build is still the old release.
    notes = analyse(found, tmp_path)["running"]["notes"]
    assert f"hypervisor logged version 2.15.0 but its image tag says 2.16.3 ({where})" in notes
    # A build of v2.16.3 logs that release's commit.
    for name in [m for m in found if m.startswith(f"logs/tensor-fusion-sys/{pod}/")]:
        found[name] = found[name].replace(b"27130cab873f2740f4714b6d7c9509b188906b9f", V2_16_3)
    notes = analyse(found, tmp_path / "rebuilt")["running"]["notes"]
    assert "hypervisor pods run different versions: 2.15.0, 2.16.3" in notes


def test_without_an_operator_pod_helm_says_from_the_chart(tmp_path: Path) -> None:
    found = dict(members("known-controller-concurrent-map-fatal"))
    listing = json.loads(found["objects/pods/tensor-fusion-sys.json"])
    listing["items"] = [p for p in listing["items"] if "controller" not in p["metadata"]["name"]]
    found["objects/pods/tensor-fusion-sys.json"] = json.dumps(listing).encode()
    operator = component(analyse(found, tmp_path), "operator")
    # Chart 1.7.6 deploys 1.48.6 by default, whatever its appVersion (1.58.4) says.
    assert (operator["version"], operator["source"]) == ("1.48.6", "helm-chart")
