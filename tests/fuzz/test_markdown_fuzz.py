"""Report escaping on hostile strings: backtick runs, mentions, issue references, raw HTML,
pipes and newlines. What analyzer/markdown.py guarantees, checked with a CommonMark parser:
a fence holds its body whole (its fence is longer than any backtick run inside), a code span
holds its text on one line, prose pings nobody and links no issue, a table cell stays one
cell; and the HTML report of a real analysis, with such strings in a finding's evidence,
has the same elements as with plain text there, and only its own script."""

from __future__ import annotations

import copy
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from fuzzkit import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from analyzer.report.markdown import md_cell, md_code, md_fence, md_text
from analyzer.report.render import render
from analyzer.run import AnalyzeOptions, run_analysis

SAMPLE = Path(__file__).resolve().parents[2] / "sample_bundles" / "controller-bad-config.tar.zst"
_PIECES = st.sampled_from(
    ["`", "``", "```", "````", "~~~", "@octocat", "@org/team", "#123", "GH-42", "gh-7",
     "NexusGPU/tensor-fusion#313", "<script>", "</script>", "<img src=x onerror=alert(1)>",
     "|", "\\|", "\\", "\n", "\r\n", "\r", " ", "  ", "\t", "&amp;", "&#96;", "<!--", "-->",
     "</details>", "<details open>", "[x](javascript:alert(1))", "*", "_", "    ", "> ", "- "]
)  # fmt: skip
HOSTILE = st.lists(_PIECES | st.text(max_size=4), max_size=16).map("".join)
PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _commonmark(text: str) -> str:
    """The text as CommonMark reads its characters: line endings \\n, NUL replaced."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def _longest_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


@fuzz_settings(200)
@given(body=HOSTILE)
def test_a_fence_holds_its_body_whole(body: str) -> None:
    block = md_fence(body)
    fence = block.split("\n", 1)[0]
    assert set(fence) == {"`"} and len(fence) > _longest_run(body)
    tokens = PARSER.parse(block)
    assert [t.type for t in tokens] == ["fence"]
    assert tokens[0].content == _commonmark(body + "\n")


@fuzz_settings(200)
@given(body=HOSTILE)
def test_a_code_span_holds_its_text_on_one_line(body: str) -> None:
    span = md_code(body)
    assert "\n" not in span and "\r" not in span
    inline = PARSER.parseInline("x " + span + " y")[0].children
    assert [t.type for t in inline] == ["text", "code_inline", "text"], span
    flat = re.sub(r"[\r\n]+", " ", body).replace("\0", "\ufffd")
    if flat.strip(" "):  # CommonMark strips one space off each end of a padded span
        content = inline[1].content
        assert content in (flat, flat[1:-1] if flat[:1] == flat[-1:] == " " else flat), span


_MENTION = re.compile(r"@[A-Za-z0-9_-]")
_REF = re.compile(r"#\d|\bGH-\d", re.IGNORECASE)


@fuzz_settings(200)
@given(text=HOSTILE)
def test_prose_pings_nobody_links_nothing_and_holds_no_html(text: str) -> None:
    out = md_text(text)
    assert "\n" not in out and "\r" not in out
    assert "<" not in out and ">" not in out
    assert not _MENTION.search(out) and not _REF.search(out), out
    inline = PARSER.parseInline(out)[0].children
    assert not [t for t in inline if t.type == "html_inline"], out


@fuzz_settings(200)
@given(text=HOSTILE, code=st.booleans())
def test_a_table_cell_stays_one_cell(text: str, code: bool) -> None:
    cell = md_cell(md_code(text) if code else md_text(text))
    assert "\n" not in cell and "\r" not in cell
    assert re.search(r"(?<!\\)\|", cell) is None, cell
    table = f"| a | b |\n|---|---|\n| {cell} | z |\n"
    cells = [t for t in PARSER.parse(table) if t.type == "td_open"]
    assert len(cells) == 2, table


# ---------------------------------------------------------------------------- the HTML
@cache
def _report() -> dict[str, Any]:
    report = run_analysis(AnalyzeOptions(bundle=SAMPLE)).report
    assert report["findings"] and report["findings"][0]["evidence"]
    return report


class _Elements(HTMLParser):
    """The start tags of a page with their attribute names, and its script elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(name for name, _ in attrs))))


def _elements(html: str) -> list[tuple[str, tuple[str, ...]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.tags


def _with(report: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    report = copy.deepcopy(report)
    finding = report["findings"][0]
    finding["evidence"] = [*texts, *finding["evidence"]]
    finding["objects"] = [*finding["objects"], *texts[:1]]
    return report


@fuzz_settings(30)
@given(texts=st.lists(HOSTILE, min_size=1, max_size=3))
def test_html_report_gains_no_element_and_no_script_from_evidence(texts: list[str]) -> None:
    plain = render(_with(_report(), ["plain"] * len(texts)), "html")
    hostile = render(_with(_report(), texts), "html")
    assert hostile.lower().count("<script") == plain.lower().count("<script") == 1
    assert _elements(hostile) == _elements(plain)
