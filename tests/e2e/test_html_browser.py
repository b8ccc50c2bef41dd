"""The HTML report in a real headless browser (Playwright driving Debian's Chromium).

The report is made from a sample bundle whose hypervisor log was given a line with an
HTML injection, quoted by the rule as evidence and in its explanation. In the browser: the
filters and the search show what they should, evidence folds, copy buttons copy, the
pictures are drawn from the bundle, nothing runs that the report did not ship, nothing is
fetched from anywhere, and the page is readable on a phone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundlekit import read_members
from PIL import Image, ImageStat
from playwright.sync_api import Page, sync_playwright

from analyzer.bundle import Bundle
from analyzer.report.build import build_report
from analyzer.report.render import render
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules

CHROMIUM = Path("/usr/bin/chromium")
SAMPLE = (
    Path(__file__).resolve().parents[2] / "sample_bundles" / "hypervisor-accelerator-lib.tar.zst"
)
NODE = "ip-10-40-160-61.ec2.internal"
INJECTION = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def hostile_bundle(root: Path) -> Path:
    """The sample, unpacked, with the injection in the log lines the rule quotes."""
    members = read_members(SAMPLE)
    manifest = json.loads(members["manifest.json"])
    logs = [
        a["paths"][0]
        for a in manifest["artifacts"]
        if a["type"] == "log"
        and a.get("pod") == f"hypervisor-{NODE}"
        and a.get("container") == "tensor-fusion-hypervisor"
        and a.get("paths")
    ]
    assert len(logs) == 2  # the current and the previous run
    for member in logs:
        text = members[member].decode()
        assert "failed to load accelerator library" in text
        members[member] = text.replace(
            "cannot open shared object file: No such file or directory",
            f"cannot open shared object file: {INJECTION}",
        ).encode()
    for name, data in members.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    tmp = tmp_path_factory.mktemp("html")
    bundle = Bundle.open(hostile_bundle(tmp / "bundle"))
    analysis = analyze(bundle, load_rules(None))
    out = {}
    for lang in ("en", "zh"):
        report = build_report(analysis, lang, bundle=bundle)
        path = tmp / f"report.{lang}.html"
        path.write_text(render(report, "html"), encoding="utf-8")
        out[lang] = (path, report)
    return out


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail("/usr/bin/chromium is missing: apt-get install -y chromium (.ci/run does)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


class Watched:
    """A page with every console error, page error and request it made."""

    def __init__(self, browser, url: str, **context) -> None:
        self.context = browser.new_context(**context)
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url)
        self.page.wait_for_load_state("load")

    def visible_findings(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "article.finding", "els => els.filter(e => !e.hidden).map(e => e.id)"
        )

    def close(self) -> None:
        self.context.close()


def _quoting(findings: list[dict], term: str) -> list[str]:
    """The findings whose visible text holds `term`, in report order."""
    return [
        f["id"]
        for f in findings
        if term in " ".join([f["title"], f["explanation"], *f["evidence"]]).lower()
    ]


def test_report_in_a_browser(reports, browser, tmp_path: Path) -> None:
    path, report = reports["en"]
    url = path.as_uri()
    w = Watched(browser, url, viewport={"width": 1280, "height": 900})
    page = w.page
    findings = report["findings"]
    all_ids = [f["id"] for f in findings]
    assert len(findings) >= 3 and len({f["severity"] for f in findings}) >= 2

    # The injection is text on the page, and it did not run.
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    accel = next(f for f in findings if f["rule_id"] == "hypervisor-not-ready/accelerator-lib")
    assert (
        INJECTION
        in page.locator(f'article[id="{accel["id"]}"] details.evidence pre').text_content()
    )
    assert INJECTION in page.locator(f'article[id="{accel["id"]}"]').inner_text()

    # Everything shows at first.
    assert w.visible_findings() == all_ids
    assert (
        page.locator("#f-shown").inner_text() == f"{len(all_ids)} of {len(all_ids)} findings shown"
    )

    # Severity: only critical.
    for sev in ("error", "warning", "info"):
        page.locator(f"input[name=severity][value={sev}]").uncheck()
    assert w.visible_findings() == [f["id"] for f in findings if f["severity"] == "critical"]
    page.locator("input[name=severity][value=critical]").uncheck()
    assert w.visible_findings() == []
    assert page.locator("#no-match").is_visible()
    for sev in ("critical", "error", "warning", "info"):
        page.locator(f"input[name=severity][value={sev}]").check()
    assert w.visible_findings() == all_ids

    # Section.
    page.select_option("#f-section", "gpu-discovery")
    assert w.visible_findings() == [f["id"] for f in findings if f["section"] == "gpu-discovery"]
    page.select_option("#f-section", "")

    # Search: matches evidence too, and opens the evidence that matched.
    page.fill("#f-text", "LIBNVIDIA-ML.so.1")
    # The library error and the findings that quote it (the down hypervisor's log), only.
    quoting = _quoting(findings, "libnvidia-ml.so.1")
    assert accel["id"] in quoting and len(quoting) < len(all_ids)
    assert w.visible_findings() == quoting
    assert (
        page.locator(f'article[id="{accel["id"]}"] details.evidence').get_attribute("open")
        is not None
    )
    page.fill("#f-text", "no such text anywhere")
    assert w.visible_findings() == [] and page.locator("#no-match").is_visible()
    page.fill("#f-text", "")
    assert w.visible_findings() == all_ids

    # Evidence folds.
    details = page.locator("details.evidence")
    page.click("#collapse-all")
    assert details.evaluate_all("ds => ds.filter(d => d.open).length") == 0
    page.click("#expand-all")
    assert details.evaluate_all("ds => ds.filter(d => !d.open).length") == 0
    page.click("#collapse-all")

    # A copy button copies its command.
    button = page.locator("article.finding button.copy").first
    command = button.get_attribute("data-copy")
    assert command and command == page.locator("article.finding .cmd pre").first.inner_text()
    button.click()
    page.wait_for_function("b => b.textContent === 'Copied'", arg=button.element_handle())

    # The pictures, from the bundle: the chain breaks at this node's hypervisor.
    chain = page.locator(f'.chain[data-node="{NODE}"]')
    assert chain.locator("li.first").get_attribute("data-link") == "hypervisor"
    assert chain.get_attribute("data-broken") == "hypervisor"
    capacity = report["views"]["capacity"]
    assert page.locator("#capacity svg.bar").count() == 2 * len(capacity) > 0
    assert (
        page.locator("#timeline circle").count() == len(report["views"]["warnings"]["events"]) > 0
    )
    assert "kubectl get pods -n tensor-fusion-sys -o wide" in page.locator("#baseline").inner_text()

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert 20_000 < shot.stat().st_size < 20_000_000
    with Image.open(shot) as image:
        assert image.width == 1280 and image.height > 2000
        stat = ImageStat.Stat(image.convert("L"))
        assert stat.stddev[0] > 20  # text, boxes and bars: far from blank
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 100

    assert w.errors == []
    assert set(w.requests) == {url}

    # Defence in depth: even a script that got into the page could not run.
    ran = page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.__csp = 1';"
        " document.body.appendChild(s); return window.__csp === undefined; }"
    )
    assert ran is True
    w.close()


def test_report_on_a_phone_and_in_chinese(reports, browser) -> None:
    path, report = reports["zh"]
    w = Watched(
        browser,
        path.as_uri(),
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
    )
    page = w.page
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("h1").inner_text() == "TensorFusion 诊断报告"
    # Nothing wider than the screen: long names wrap, wide tables scroll inside their box.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # The chain stacks: each link below the previous one.
    boxes = page.locator(f'.chain[data-node="{NODE}"] li')
    tops = [boxes.nth(i).bounding_box()["y"] for i in range(boxes.count())]
    assert tops == sorted(tops) and len(set(tops)) == 4
    page.fill("#f-text", "libnvidia-ml")
    quoting = _quoting(report["findings"], "libnvidia-ml")
    assert w.visible_findings() == quoting != []
    assert (
        page.locator("#f-shown").inner_text()
        == f"显示 {len(quoting)} / {len(report['findings'])} 个问题"
    )
    assert w.errors == [] and page.evaluate("window.__pwned") is None
    w.close()
