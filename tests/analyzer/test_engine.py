"""Rule outcomes: fired with evidence, passed, skipped when data is missing, error isolated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bundlekit import make_bundle, operator_pod

from analyzer.bundle import Bundle
from analyzer.rules.engine import analyze
from analyzer.rules.loading import default_rules_dir, load_rules

NS = "tensor-fusion-sys"


def app_pod(name: str) -> dict:
    pod = operator_pod(name, "OOMKilled")
    pod["metadata"] = {"name": name, "namespace": "ml-team", "labels": {"app": "trainer"}}
    return pod


def _analyze(bundle_path: Path, rules_dir: Path | None = None):
    return analyze(Bundle.open(bundle_path), load_rules(rules_dir or default_rules_dir()))


def _result(analysis, rule_id):
    return next(r for r in analysis.results if r.rule_id == rule_id)


def test_oom_fires_on_the_controller_only(tmp_path: Path) -> None:
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={
            ("", "pods"): [
                operator_pod("tensor-fusion-sys-controller-6b7c-abcde", "OOMKilled", restarts=7),
                app_pod("trainer-0"),
            ],
            ("", "events"): [],
        },
        logs={
            (NS, "tensor-fusion-sys-controller-6b7c-abcde", "controller", False): "I1130 started\n",
            (
                NS,
                "tensor-fusion-sys-controller-6b7c-abcde",
                "controller",
                True,
            ): "I1130 reconcile\n",
        },
    )
    analysis = _analyze(path)
    res = _result(analysis, "controller-crash/oom-killed")
    assert res.outcome == "fired"
    [finding] = res.findings
    assert finding.objects == ["Pod/tensor-fusion-sys/tensor-fusion-sys-controller-6b7c-abcde"]
    assert finding.manual == ("controller-crash/oom-killed",)
    assert (
        "container controller: lastState.terminated.reason=OOMKilled exitCode=137 "
        "finishedAt=2026-11-30T08:59:00Z, restartCount=7"
    ) in finding.evidence
    assert "container controller: resources.limits.memory=2Gi" in finding.evidence
    assert "2Gi" in finding.texts["explanation"]["en"]
    assert finding.commands[0].startswith("helm upgrade tensor-fusion-sys ")
    assert finding.commands[0].endswith("--set controller.resources.limits.memory=4096Mi")
    assert _result(analysis, "controller-crash/global-config-invalid").outcome == "passed"


def test_rule_is_skipped_when_its_input_was_forbidden(tmp_path: Path) -> None:
    forbidden = {
        "id": "objects:pods:tf",
        "step": "baseline/tf-pods",
        "type": "objects",
        "status": "forbidden",
        "group": "",
        "resource": "pods",
        "namespace": NS,
        "paths": [],
        "message": 'pods is forbidden: User "bob" cannot list resource "pods"',
    }
    path = make_bundle(tmp_path / "b.tar.zst", objects={}, failed=[forbidden])
    res = _result(_analyze(path), "controller-crash/oom-killed")
    assert res.outcome == "skipped"
    assert res.reason() == (
        'pods in tensor-fusion-sys: forbidden (pods is forbidden: User "bob" cannot list '
        'resource "pods")'
    )
    assert res.reason("zh") == (
        'pods（命名空间 tensor-fusion-sys）：forbidden（pods is forbidden: User "bob" cannot '
        'list resource "pods"）'
    )
    assert res.findings == []


def test_missing_log_skips_instead_of_passing(tmp_path: Path) -> None:
    pod = operator_pod("tensor-fusion-sys-controller-1", None)
    path = make_bundle(tmp_path / "b.tar.zst", objects={("", "pods"): [pod]})
    res = _result(_analyze(path), "controller-crash/global-config-invalid")
    assert res.outcome == "skipped"
    assert res.reason() == (
        "logs were not collected: tensor-fusion-sys/tensor-fusion-sys-controller-1/controller"
    )
    assert res.reason("zh") == (
        "没有收集日志：tensor-fusion-sys/tensor-fusion-sys-controller-1/controller"
    )


def test_a_skip_names_each_kind_of_missing_data_once() -> None:
    from analyzer.bundle import Missing
    from analyzer.i18n import gaps_text

    smi = Missing.of("check_not_run", check="limits-not-enforced/nvidia-smi")
    events = Missing.of(
        "collection_failed", what="events", namespace="ml", status="forbidden", detail="no"
    )
    gaps = [(smi, f"ml/p{i:04d}") for i in range(10_000)] + [(smi, "ml/p0001"), (events, "")]
    smi_en = "check limits-not-enforced/nvidia-smi was not run (tf-collect --exec runs it)"
    smi_zh = "检查 limits-not-enforced/nvidia-smi 没有运行（tf-collect --exec 会运行它）"
    assert gaps_text(gaps, "en") == (
        f"{smi_en}: ml/p0000, ml/p0001, ml/p0002 and 9,997 more; events in ml: forbidden (no)"
    )
    assert gaps_text(gaps, "zh") == (
        f"events（命名空间 ml）：forbidden（no）；{smi_zh}：ml/p0000, ml/p0001, ml/p0002 等另外 "
        "9,997 个"
    )


def test_failing_rule_is_an_error_and_the_others_run(tmp_path: Path) -> None:
    rules = tmp_path / "rules" / "controller-crash"
    rules.mkdir(parents=True)
    (rules / "crd-outdated.yaml").write_text(
        yaml.safe_dump(
            {
                "id": "controller-crash/crd-outdated",
                "manual": ["controller-crash/crd-outdated"],
                "severity": "error",
                "for_each": {"resource": "pods", "namespace": "tf", "as": "pod"},
                "when": "pod.spec.nothing.here == 1",
                "title": {"en": "x", "zh": "x"},
                "explanation": {"en": "x", "zh": "x"},
                "fix": {"en": "x", "zh": "x"},
            }
        )
    )
    import shutil

    shutil.copy(
        default_rules_dir() / "controller-crash" / "oom-killed.yaml", rules / "oom-killed.yaml"
    )
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={("", "pods"): [operator_pod("tensor-fusion-sys-controller-1", "OOMKilled")]},
    )
    analysis = _analyze(path, tmp_path / "rules")
    broken = _result(analysis, "controller-crash/crd-outdated")
    assert broken.outcome == "error"
    assert broken.reason().startswith("Pod/tensor-fusion-sys/tensor-fusion-sys-controller-1: when:")
    assert _result(analysis, "controller-crash/oom-killed").outcome == "fired"


def test_unredacted_secrets_are_reported_by_member_and_kind(tmp_path: Path) -> None:
    # Written around tf-collect (whose writer always redacts), like a hand-made archive.
    from bundlekit import base_manifest, file_member, manifest_member, raw_tar_zst

    from analyzer.report.build import build_report
    from analyzer.report.render import render

    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlc2lnbmF0dXJl"
    member = "logs/tensor-fusion-sys/p/c.log"
    art = {
        "id": "log:p",
        "step": "s",
        "type": "log",
        "status": "ok",
        "namespace": NS,
        "pod": "p",
        "container": "c",
        "paths": [member],
    }
    path = raw_tar_zst(
        tmp_path / "b.tar.zst",
        [
            manifest_member(base_manifest([art])),
            file_member(member, f"I1130 token={jwt}\nI1130 token expired, retrying\n".encode()),
        ],
    )
    analysis = _analyze(path)
    assert analysis.possible_secrets == [{"member": member, "kind": "jwt", "count": 1}]
    report = build_report(analysis, "en")
    md = render(report, "md")
    assert "still contains what looks like secrets" in md
    assert jwt not in md and jwt not in render(report, "html")


def test_reader_accessors_for_exec_and_status(tmp_path: Path) -> None:
    from bundlekit import base_manifest

    from collector.bundle import BundleWriter

    writer = BundleWriter(tmp_path / "b.tar.zst")
    writer.put("exec/ml-team/p/c/ld-preload.txt", b"/tensor-fusion-limiter/libcuda_limiter.so\n")
    art = {
        "id": "exec:ml-team:p:c:ld-preload",
        "step": "limits-not-enforced/ld-preload",
        "type": "exec",
        "status": "ok",
        "namespace": "ml-team",
        "pod": "p",
        "container": "c",
        "argv": ["cat", "/etc/ld.so.preload"],
        "exit_code": 0,
        "paths": ["exec/ml-team/p/c/ld-preload.txt"],
    }
    gone = {
        "id": "log:x",
        "step": "s",
        "type": "log",
        "status": "timeout",
        "namespace": "n",
        "pod": "q",
        "container": "c",
        "message": "no answer within 30s",
        "paths": [],
    }
    bundle = Bundle.open(writer.finish(base_manifest([art, gone])))
    (out,) = bundle.exec_outputs("ml-team", "p", "limits-not-enforced/ld-preload")
    assert out.container == "c" and out.argv == ("cat", "/etc/ld.so.preload") and out.exit_code == 0
    assert out.text == "/tensor-fusion-limiter/libcuda_limiter.so\n"
    assert [(a["id"], a["message"]) for a in bundle.failed_artifacts()] == [
        ("log:x", "no answer within 30s")
    ]
    assert bundle.log("n", "q", "c").collected is False


def _rule(root: Path, rule_id: str, **fields) -> None:
    data = {
        "id": rule_id,
        "manual": [rule_id],
        "severity": "warning",
        "title": {"en": "t", "zh": "t"},
        "explanation": {"en": "e", "zh": "e"},
        "fix": {"en": "f", "zh": "f"},
        **fields,
    }
    path = root / f"{rule_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))


def test_exec_helm_and_grep_bindings(tmp_path: Path) -> None:
    from bundlekit import base_manifest, file_member, manifest_member, raw_tar_zst

    rules = tmp_path / "rules"
    _rule(
        rules,
        "limits-not-enforced/no-preload",
        for_each={"resource": "pods", "namespace": "all", "as": "pod"},
        with_={"preload": {"exec": "pod", "check": "limits-not-enforced/ld-preload"}},
        when='!preload.text.contains("libcuda_limiter.so")',
    )
    _rule(
        rules,
        "controller-crash/isolation-policy-invalid",
        with_={"helm": {"helm": "release"}},
        when='has(helm.values.controller) && helm.values.controller.isolationModePolicy == "strict"',
    )
    _rule(
        rules,
        "webhook-not-injecting/pod-predates-label",
        for_each={"resource": "pods", "namespace": "tf", "as": "pod"},
        with_={"mutations": {"logs": "pod", "containers": ["controller"], "grep": "Mutating pod"}},
        when="size(mutations) == 2",
    )
    for f in rules.rglob("*.yaml"):  # `with` is a Python keyword; the YAML key is plain
        f.write_text(f.read_text().replace("with_:", "with:"))
    pods = [
        {
            "kind": "Pod",
            "metadata": {"name": "app", "namespace": "ml"},
            "spec": {"containers": [{"name": "app"}]},
        },
        {
            "kind": "Pod",
            "metadata": {"name": "ctl", "namespace": NS},
            "spec": {"containers": [{"name": "controller"}]},
        },
    ]
    arts = [
        {
            "id": "o",
            "step": "s",
            "type": "objects",
            "status": "ok",
            "group": "",
            "resource": "pods",
            "kind": "Pod",
            "namespace": None,
            "paths": ["objects/pods.json"],
        },
        {
            "id": "e",
            "step": "s",
            "type": "exec",
            "status": "ok",
            "namespace": "ml",
            "pod": "app",
            "container": "app",
            "check": "limits-not-enforced/ld-preload",
            "argv": ["cat", "/etc/ld.so.preload"],
            "exit_code": 1,
            "paths": ["exec/ml/app/app/ld-preload.txt"],
        },
        {"id": "h", "step": "s", "type": "helm", "status": "ok", "paths": ["helm/r.json"]},
        {
            "id": "g",
            "step": "s",
            "type": "log",
            "status": "ok",
            "namespace": NS,
            "pod": "ctl",
            "container": "controller",
            "grep": "Mutating pod",
            "paths": ["logs/g.log"],
        },
        {
            "id": "c",
            "step": "s",
            "type": "log",
            "status": "ok",
            "namespace": NS,
            "pod": "ctl",
            "container": "controller",
            "paths": ["logs/c.log"],
        },
    ]
    path = raw_tar_zst(
        tmp_path / "b.tar.zst",
        [
            manifest_member(base_manifest(arts)),
            file_member("objects/pods.json", json.dumps({"items": pods}).encode()),
            file_member(
                "exec/ml/app/app/ld-preload.txt", b"cat: /etc/ld.so.preload: No such file\n"
            ),
            file_member(
                "helm/r.json",
                json.dumps({"values": {"controller": {"isolationModePolicy": "strict"}}}).encode(),
            ),
            file_member("logs/g.log", b'"Mutating pod" a\n"Mutating pod" b\n'),
            file_member("logs/c.log", b"x\n"),
        ],
    )
    analysis = _analyze(path, rules)
    outcome = {r.rule_id: (r.outcome, [f.objects for f in r.findings]) for r in analysis.results}
    assert outcome["limits-not-enforced/no-preload"] == ("fired", [["Pod/ml/app"]])
    assert outcome["controller-crash/isolation-policy-invalid"] == ("fired", [[]])
    assert outcome["webhook-not-injecting/pod-predates-label"] == (
        "fired",
        [["Pod/tensor-fusion-sys/ctl"]],
    )


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlc2lnbmF0dXJl", "jwt"),
        ("ghp_" + "a1B2" * 9, "github-token"),
        ("AKIA" + "ABCDEFGHIJKLMNOP", "aws-access-key-id"),
        # Generated-looking: `hf_` + 30 x's is a mask, which neither redaction nor this counts.
        ("hf_" + "a1B2" * 8, "huggingface-token"),
        ("sk-proj-" + "a1B2" * 8, "openai-key"),
    ],
)
def test_a_secret_counts_at_a_word_start_only(value: str, kind: str) -> None:
    from bundlekit import scan

    found = {"m": f'token="{value}" {value}\n{value}'.encode()}
    assert [(x.kind, x.count) for x in scan(found)] == [(kind, 3)]
    # Inside a longer word (a hash, a base64 blob) the same letters are not that secret.
    assert scan({"m": f"x{value} _{value} 9{value}".encode()}) == []


def test_a_failing_evidence_expression_keeps_the_finding(tmp_path: Path) -> None:
    _rule(
        tmp_path / "rules",
        "controller-crash/oom-killed",
        for_each={"resource": "pods", "namespace": "tf", "as": "pod"},
        when='pod.metadata.name.startsWith("tensor-fusion-sys-controller")',
        evidence=['"restarts: " + string(pod.status.nothing.here)', '"pod " + pod.metadata.name'],
        vars={"limit": "pod.spec.nothing"},
        explanation={"en": "limit {{ limit }}", "zh": "e"},
    )
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={("", "pods"): [operator_pod("tensor-fusion-sys-controller-1", "OOMKilled")]},
    )
    res = _result(_analyze(path, tmp_path / "rules"), "controller-crash/oom-killed")
    assert res.outcome == "fired"
    [finding] = res.findings
    assert finding.evidence[0] == "pod tensor-fusion-sys-controller-1"
    assert len(finding.evidence) == 3
    assert all(e.startswith("(could not be shown: ") for e in finding.evidence[1:])
    assert finding.texts["explanation"]["en"] == "limit "


def test_a_root_whose_cause_rule_failed_says_so(tmp_path: Path) -> None:
    """A consequence is never presented as the plain root cause when the rule that looks for
    its cause ended in error: the report names that rule."""
    rules = tmp_path / "rules"
    _rule(
        rules,
        "controller-crash/crd-outdated",
        for_each={"resource": "pods", "namespace": "tf", "as": "pod"},
        when="pod.spec.nothing.here == 1",
    )
    _rule(
        rules,
        "baseline/cluster-not-running",
        for_each={"resource": "pods", "namespace": "tf", "as": "pod"},
        when="true",
        consequence_of=["controller-crash"],
    )
    path = make_bundle(
        tmp_path / "b.tar.zst",
        objects={("", "pods"): [operator_pod("tensor-fusion-sys-controller-1", "OOMKilled")]},
    )
    analysis = _analyze(path, rules)
    assert _result(analysis, "controller-crash/crd-outdated").outcome == "error"
    [root] = analysis.roots
    assert root.rule_id == "baseline/cluster-not-running"
    assert root.unchecked_causes == ["controller-crash/crd-outdated"]
