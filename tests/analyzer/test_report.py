"""The report: JSON carries the views and validates; Markdown is safe to paste into a GitHub
issue and fits its body limit on any bundle; output is byte-stable; the language follows
--lang or the locale."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import samplekit
from bundlekit import make_bundle
from click.testing import CliRunner
from markdown_it import MarkdownIt

import tf_support_schemas as schemas
from analyzer.bundle import Bundle
from analyzer.cli import main
from analyzer.i18n import STRINGS, default_lang
from analyzer.report.build import build_report
from analyzer.report.markdown import GITHUB_BODY_LIMIT, body_length, md_code, md_fence, md_text
from analyzer.report.render import render
from analyzer.rules.engine import analyze

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
NS = "tensor-fusion-sys"
ZWSP = "\u200b"
# What a hostile log line may carry: fences, mentions, references, raw HTML, table pipes.
HOSTILE = (
    "```` ``` ~~~ @octocat @org/team #123 GH-42 gh-7 NexusGPU/tensor-fusion#313 "
    "<script>alert(1)</script> <img src=x onerror=alert(2)> </details> <details open> a|b"
)
ALLOWED_HTML = {
    "<details>",
    "</details>",
    "<summary>",
    "</summary>",
    "<sub>",
    "</sub>",
    "<br>",
    "<code>",
    "</code>",
}


@pytest.fixture(scope="module")
def rules():
    return samplekit.rules()


def report_of(path: Path, rules, lang: str = "en") -> dict:
    bundle = Bundle.open(path)
    return build_report(analyze(bundle, rules), lang, bundle=bundle)


def operator_pod(name: str) -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"tensor-fusion.ai/component": "operator"},
            "creationTimestamp": "2026-11-30T09:00:00Z",
        },
        "spec": {"containers": [{"name": "controller", "image": "tensorfusion/operator:2.17.0"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "controller",
                    "restartCount": 4,
                    "ready": False,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                }
            ],
        },
    }


def config_error(detail: str) -> str:
    return (
        'E1130 09:12:03.481220       1 main.go:640] "unable to load global config file" '
        f'err="{detail}" configPath="/etc/tensor-fusion/config.yaml" logger="setup"\n'
    )


def hostile_bundle(tmp_path: Path) -> Path:
    pod = "tensor-fusion-sys-controller-6b8f9d7c54-l7qzt"
    gap = {
        "id": "objects:gpus.tensor-fusion.ai",
        "step": "baseline/get-gpus",
        "type": "objects",
        "status": "forbidden",
        "message": f"gpus is forbidden: User cannot list {HOSTILE}",
        "group": "tensor-fusion.ai",
        "version": "v1",
        "resource": "gpus",
        "kind": "GPU",
        "namespaced": False,
        "namespace": None,
        "paths": [],
    }
    return make_bundle(
        tmp_path / "hostile.tar.zst",
        objects={("", "pods"): [operator_pod(pod)]},
        logs={(NS, pod, "controller", False): config_error(HOSTILE)},
        failed=[gap],
    )


# ------------------------------------------------------------------------------ JSON
def test_json_report_validates_and_carries_the_views(rules) -> None:
    report = samplekit.report("gpu-discovery-two-nodes")
    data = json.loads(render(report, "json"))
    assert schemas.first_error("report", data) is None
    views = data["views"]
    assert [v["id"] for v in views["kubectl"]] == ["tf-resources", "tf-pods", "gpu-columns"]
    broken = {c["node"]: c["first_broken"] for c in views["discovery"]}
    assert broken == {
        "ip-10-40-160-61.ec2.internal": None,
        "ip-10-40-161-25.ec2.internal": 0,  # GPUs, but not labelled
        "ip-10-40-166-115.ec2.internal": 2,  # hypervisor in CrashLoopBackOff
    }
    pool = next(c for c in views["capacity"] if c["id"] == "GPUPool/tensor-fusion-shared")
    assert pool["tflops"] == {
        "total": 1000,
        "available": 960,
        "total_text": "1k",
        "available_text": "960",
    }
    assert pool["vram"]["total"] == 184224 * 2**20
    ids = [f["id"] for f in data["findings"]]
    assert len(ids) == len(set(ids))


def test_report_without_the_bundle_has_no_views(rules) -> None:
    report = build_report(samplekit.sample("healthy").analysis, "en")
    assert report["views"] is None
    for fmt in ("md", "html", "json"):
        assert render(report, fmt)


def test_output_is_byte_stable_and_carries_no_wall_clock(rules) -> None:
    path = SAMPLES / "hypervisor-crashloop-recreate.tar.zst"
    first, second = report_of(path, rules), report_of(path, rules)
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    for fmt in ("md", "html", "json"):
        text = render(first, fmt)
        assert text == render(second, fmt)
        if not first["bundle"]["created_at"].startswith(today):
            assert today not in text


# ------------------------------------------------------------------------------ Markdown safety
def test_md_helpers() -> None:
    assert md_fence(["a ```` b"]).startswith("`````\n")
    assert md_code("x`y") == "``x`y``" and md_code("`x") == "`` `x ``"
    assert md_text("<b>&") == "&lt;b&gt;&amp;"
    assert md_text("@me #1 gh-2 repo#3") == f"@{ZWSP}me #{ZWSP}1 gh-{ZWSP}2 repo#{ZWSP}3"
    assert md_text("a\nb") == "a b"


def _tokens(md: str):
    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    for tok in parser.parse(md):
        yield tok
        yield from tok.children or ()


def test_hostile_text_cannot_break_out_or_ping(tmp_path: Path, rules) -> None:
    report = report_of(hostile_bundle(tmp_path), rules)
    assert [f["rule_id"] for f in report["findings"]] == ["controller-crash/global-config-invalid"]
    md = render(report, "md")
    tokens = list(_tokens(md))
    html = {t.content.strip() for t in tokens if t.type in ("html_inline", "html_block")}
    assert {h for h in html if not any(h.startswith(a) for a in ALLOWED_HTML)} == set(), html
    # The log line is whole inside one fence: nothing after it became Markdown or HTML.
    fences = [t.content for t in tokens if t.type == "fence"]
    assert any(HOSTILE in f for f in fences)
    # Outside code, nothing GitHub would act on.
    prose = " ".join(t.content for t in tokens if t.type == "text")
    assert "<script" not in prose or "&lt;script" in md
    for ref in ("@octocat", "@org", "#123", "GH-42", "gh-7", "fusion#313"):
        assert ref not in prose, ref
    assert f"@{ZWSP}octocat" in prose and f"#{ZWSP}123" in prose
    # The hostile gap message stays in its table row; the sections after it still exist.
    headings = [t.content for t in tokens if t.type == "inline" and t.map and t.level == 1]
    t = STRINGS["en"]
    assert t["skipped_rules"] in headings and t["gaps"] in headings


def test_html_escapes_bundle_text(tmp_path: Path, rules) -> None:
    html = render(report_of(hostile_bundle(tmp_path), rules), "html")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    # Only the report's own script, allowed by its hash.
    assert html.count("<script>") == 1
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/]+=*'", html)


# ------------------------------------------------------------------------------ size limit
def _inflate(
    report: dict,
    *,
    findings: int = 0,
    evidence: int = 0,
    line: int = 100,
    pods: int = 0,
    gaps: int = 0,
    title: int = 0,
) -> dict:
    big = json.loads(json.dumps(report))
    base = big["findings"][0]
    extra = []
    for i in range(findings):
        root = i % 3 == 0
        extra.append(
            {
                **base,
                "id": f"{base['rule_id']}@Pod/x/p{i}",
                "rule_id": f"{base['rule_id']}-{i % 7}"
                if root
                else "webhook-rejects/webhook-unavailable",
                "severity": ("critical", "error", "warning")[i % 3],
                "objects": [f"Pod/x/p{i}"],
                "title": f"Finding {i} " + "T" * title,
                "evidence": [f"line {j} " + "x" * line for j in range(evidence)],
                "role": "root_cause" if root else "consequence",
                "root_cause": root,
                "caused_by": None if root else base["id"],
            }
        )
    big["findings"] += extra
    big["summary"]["root_causes"] = sum(f["role"] == "root_cause" for f in big["findings"])
    if pods:
        view = big["views"]["kubectl"][1]
        row = view["tables"][0]["rows"][0]
        view["tables"][0]["rows"] = [[f"pod-{i}", *row[1:]] for i in range(pods)]
        view["tables"][0]["rows_total"] = pods
    big["collection_gaps"] += [
        {
            "artifact": f"a{i}",
            "step": "s",
            "status": "forbidden",
            "what": f"pods in ns{i}",
            "message": "forbidden " * 20,
        }
        for i in range(gaps)
    ]
    return big


SHAPES = {
    "many findings, long evidence": {"findings": 60, "evidence": 200, "line": 120},
    "very long lines": {"findings": 5, "evidence": 3, "line": 200_000},
    "thousands of root causes": {"findings": 1500, "evidence": 2},
    "huge kubectl views": {"pods": 20_000},
    "many collection gaps": {"gaps": 5000},
    "giant titles": {"findings": 40, "title": 20_000},
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_markdown_fits_github_limit_and_keeps_every_root_cause(shape: str, rules) -> None:
    report = samplekit.report("webhook-rejects-cascade")
    big = _inflate(report, **SHAPES[shape])
    md = render(big, "md")
    assert body_length(md) <= GITHUB_BODY_LIMIT
    t = STRINGS["en"]
    assert t["trim_note"] in md
    for f in big["findings"]:
        if f["role"] == "root_cause":
            assert f["rule_id"] in md or f["title"][:60] in md, f["id"]
    # Every fence that opens also closes: the parse ends outside code.
    assert md.rstrip().endswith("</sub>") or t["trim_hard_cut"] in md


def test_trimming_drops_the_least_important_evidence_first(rules) -> None:
    report = samplekit.report("webhook-rejects-cascade")
    big = _inflate(report, findings=40, evidence=30, line=300)
    md = render(big, "md")
    assert body_length(md) <= GITHUB_BODY_LIMIT
    root = big["findings"][0]
    assert root["evidence"][0] in md  # the first root cause keeps its evidence
    t = STRINGS["en"]
    assert t["trim_evidence_dropped"] % 1 not in md  # more than one finding lost its evidence
    dropped = md.count(t["evidence_dropped"].split("(")[0])
    kept = md.count(f"<summary>{t['evidence']} (")
    assert dropped > 0 and kept > 0
    # What goes first are consequences: no root cause lost evidence while one kept it.
    sections = md.split("\n### ")[1:]
    lost = [
        s.startswith(t["root_cause"]) for s in sections if t["evidence_dropped"].split("(")[0] in s
    ]
    kept_cons = [s for s in sections if s.startswith(t["consequence"]) and "<details>" in s]
    assert not (any(lost) and kept_cons)


def test_large_real_bundle_fits(tmp_path: Path, rules) -> None:
    pods = [operator_pod(f"tensor-fusion-sys-controller-{i:04d}") for i in range(60)]
    line = config_error("yaml: line 14: did not find expected key " + "z" * 3000)
    logs = {(NS, p["metadata"]["name"], "controller", False): line * 20 for p in pods}
    path = make_bundle(tmp_path / "big.tar.zst", objects={("", "pods"): pods}, logs=logs)
    report = report_of(path, rules)
    assert report["summary"]["root_causes"] == 60
    md = render(report, "md")
    assert body_length(md) <= GITHUB_BODY_LIMIT
    assert md.count("**[critical]") == 60  # every root cause in the summary


# ------------------------------------------------------------------------------ language
def test_default_language_follows_the_locale() -> None:
    assert default_lang({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert default_lang({"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}) == "zh"
    assert default_lang({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert default_lang({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}) == "zh"
    assert default_lang({}) == "en"


@pytest.mark.parametrize(
    ("env", "args", "want"),
    [
        ({"LANG": "zh_CN.UTF-8"}, [], "zh"),
        ({"LANG": "zh_CN.UTF-8"}, ["--lang", "en"], "en"),
    ],
)
def test_cli_language(env: dict, args: list, want: str) -> None:
    runner = CliRunner()
    env = {"LC_ALL": None, "LC_MESSAGES": None, **env}
    result = runner.invoke(
        main, [str(SAMPLES / "controller-bad-config.tar.zst"), "--format", "md", *args], env=env
    )
    assert result.exit_code == 0, result.output
    assert STRINGS[want]["report_title"] in result.output
    other = "en" if want == "zh" else "zh"
    assert STRINGS[other]["report_title"] not in result.output
