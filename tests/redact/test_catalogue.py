"""The catalogue of token formats (tf_support_schemas.tokens): each format's examples are what
it says, its near misses are not, tf-collect redacts every example with the format's kind and
leaves every near miss, and tf-analyze's leak scan agrees with both."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.bundle.leaks import scan_member
from collector.redact import Redactor
from tf_support_schemas.token_format import RULE_SET_SOURCES, TokenFormat, rule_set_source
from tf_support_schemas.tokens import FORMATS, PEM, STANDALONE

KEY = b"catalogue-test-key-0123456789abc"
EXAMPLES = [(f, e) for f in FORMATS for e in f.examples]
NEAR = [(f, n) for f in FORMATS for n in f.near_misses]


def _id(case: tuple[TokenFormat, str]) -> str:
    return f"{case[0].kind}:{case[1][:24]}"


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.kind}:{f.platform[:20]}")
def test_every_format_is_documented_and_well_formed(fmt: TokenFormat) -> None:
    assert re.fullmatch(r"[a-z0-9-]+", fmt.kind)
    assert fmt.source.startswith("https://")
    assert fmt.examples and fmt.near_misses
    assert fmt.pattern.groups == 0  # the scanner names its own groups
    assert fmt.prefix or fmt.anchor or not fmt.standalone
    assert all(c.isascii() for c in fmt.regex)
    for rule in fmt.rule_sets:
        name, _, rule_id = rule.partition(":")
        assert name in RULE_SET_SOURCES and re.fullmatch(r"[a-z0-9_-]+", rule_id), rule
    # A shape no page states is cited from a rule set that holds it, by that rule's address.
    if fmt.from_rule_set:
        assert fmt.source in {rule_set_source(r) for r in fmt.rule_sets}


@pytest.mark.parametrize("case", EXAMPLES, ids=[_id(c) for c in EXAMPLES])
def test_examples_match_their_format(case: tuple[TokenFormat, str]) -> None:
    fmt, example = case
    assert fmt.pattern.fullmatch(example)
    assert fmt.check is None or fmt.check(example)


@pytest.mark.parametrize("case", NEAR, ids=[_id(c) for c in NEAR])
def test_near_misses_do_not(case: tuple[TokenFormat, str]) -> None:
    fmt, near = case
    assert not (fmt.pattern.fullmatch(near) and (fmt.check is None or fmt.check(near)))


STANDALONE_EXAMPLES = [(f, e) for f in STANDALONE if f is not PEM for e in f.examples]


@pytest.mark.parametrize("case", STANDALONE_EXAMPLES, ids=[_id(c) for c in STANDALONE_EXAMPLES])
def test_redaction_and_leak_scan_agree_on_every_example(case: tuple[TokenFormat, str]) -> None:
    fmt, example = case
    text = f"2025-03-01T09:10:05Z INFO loaded {example} from the environment\n"
    out = Redactor(key=KEY).redact_text(text)
    secret = example[re.match(re.escape(fmt.prefix) + fmt.head, example).end() :]
    assert secret not in out
    assert f"<redacted:{fmt.kind}:" in out
    assert [(leak.kind, leak.count) for leak in scan_member("m", text.encode())] == [(fmt.kind, 1)]
    assert scan_member("m", out.encode()) == []  # placeholders are never leaks


@pytest.mark.parametrize("case", NEAR, ids=[_id(c) for c in NEAR])
def test_near_misses_stay_and_are_no_leak(case: tuple[TokenFormat, str]) -> None:
    _, near = case
    text = f"saw {near} in the file"
    assert Redactor(key=KEY).redact_text(text) == text
    assert scan_member("m", text.encode()) == []


def test_the_pem_header_is_a_leak_and_its_key_is_redacted_whole() -> None:
    key = "-----BEGIN EC PRIVATE KEY-----\nMIIEfakeBODY0123456789\n-----END EC PRIVATE KEY-----"
    assert [leak.kind for leak in scan_member("m", key.encode())] == ["private-key"]
    assert "MIIEfakeBODY" not in Redactor(key=KEY).redact_text(key)


def test_a_value_under_a_name_gets_its_shape_kind() -> None:
    # The same secret is the same placeholder as a bare token and as an env var's value.
    r = Redactor(key=KEY)
    token = "glpat-FAKEfake0123456789ab"
    bare = r.redact_text(f"cloning with {token}")
    named = r.redact_text(f"GITLAB_TOKEN={token}")
    placeholder = re.search(r"<redacted:[a-z-]+:[0-9a-f]+>", bare).group()
    assert placeholder.startswith("<redacted:gitlab-token:") and placeholder in named


# Formats with no shape of their own are left out of the table (docs/token-formats.md says
# which): a name says what they are, and the value under it goes.
BY_NAME = [
    ("VAULT_UNSEAL_KEY", "kq8Vn3Rt6Xz1Mb4Jc7Pw0OeYh2Gd5Lq9Sn3Rt6Xz1M="),
    ("vault_recovery_key", "kq8Vn3Rt6Xz1Mb4Jc7Pw0OeYh2Gd5Lq9Sn3Rt6Xz1M="),
    ("CODACY_PROJECT_TOKEN", "Kq8Vn3Rt6Xz1Mb4Jc7Pw"),
    ("DISCORD_BOT_TOKEN", "MTA1NjY3ODkwMTIzNDU2Nzg5MA.Gq3rZ8.vN1xK5mT2pL7cB0Wq3rZ8vN1xK5mT2pL7c"),
    ("MAILCHIMP_API_KEY", "0123456789abcdef0123456789abcdef-us21"),
]


@pytest.mark.parametrize("name,value", BY_NAME, ids=[n for n, _ in BY_NAME])
def test_a_format_without_a_shape_is_found_by_its_name(name: str, value: str) -> None:
    out = Redactor(key=KEY).redact_text(f"{name}={value}\n")
    assert value not in out and out.startswith(f"{name}=<redacted:")


DOC = (Path(__file__).parents[2] / "docs" / "token-formats.md").read_text()


def _section(title: str) -> str:
    return DOC.split(f"### {title}\n", 1)[1].split("\n#", 1)[0]


@pytest.mark.parametrize("name", ["gitleaks", "trufflehog", "detect-secrets"])
def test_the_doc_counts_what_the_table_covers_and_lists_what_it_leaves(name: str) -> None:
    covered = {r.split(":", 1)[1] for f in FORMATS for r in f.rule_sets if r.startswith(f"{name}:")}
    left = [
        rule
        for line in _section(name).splitlines()[2:]
        for rule in re.findall(r"`([^`]+)`", line.rsplit("|", 2)[1])
    ]
    holds, in_doc_covered, in_doc_left = map(
        int, re.search(rf"^\| {name} \| (\d+) \| (\d+) \| (\d+) \|$", DOC, re.M).groups()
    )
    assert (in_doc_covered, in_doc_left) == (len(covered), len(left))
    assert len(set(left)) == len(left) and not covered & set(left)
    assert holds == len(covered) + len(left)


def test_the_doc_counts_the_rows_that_cite_a_page() -> None:
    pages = sum(not f.from_rule_set for f in FORMATS)
    assert f"Rows citing a page rather than a rule set: {pages} of {len(FORMATS)}." in DOC
    alone = sum(not f.rule_sets for f in FORMATS)
    assert f"Rows whose format none of the three rule sets holds: {alone} (" in DOC
