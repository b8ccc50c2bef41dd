"""Bearer tokens have one rule (tf_support_schemas.tokens.BEARER): what tf-collect redacts by
it is what tf-analyze's leak scan counts in a bundle that was not redacted, and a redacted
one leaves the scan nothing."""

from __future__ import annotations

import pytest

from analyzer.bundle.leaks import scan_member
from collector.redact import Redactor

KEY = b"bearer-rule-test-key-0123456789ab"
TOKEN = "a1B2c3D4e5F6g7H8i9J0"

WRITTEN = [
    f"Authorization: Bearer {TOKEN}",
    f'{{"headers":{{"Authorization":["Bearer {TOKEN}"]}}}}',
    f"map[Authorization:[Bearer {TOKEN}]]",
    f"curl -H 'authorization: bearer {TOKEN}' https://api.example.com",
    f"I1130 09:11:44 client.go:88] retrying with BEARER {TOKEN}",
]
PROSE = [
    "Bearer authentication failed: check the service account",
    "the bearer token is missing",
    "xbearer abcdefghijk1234567890",
]


def bearer_count(text: str) -> int:
    return sum(
        leak.count for leak in scan_member("m", text.encode()) if leak.kind == "bearer-token"
    )


@pytest.mark.parametrize("text", WRITTEN)
def test_what_the_scan_counts_the_engine_redacts(text: str) -> None:
    assert bearer_count(text) == 1
    out = Redactor(key=KEY).redact_text(text)
    assert TOKEN not in out
    assert bearer_count(out) == 0


@pytest.mark.parametrize("text", PROSE)
def test_prose_is_neither_counted_nor_redacted(text: str) -> None:
    assert bearer_count(text) == 0
    assert Redactor(key=KEY).redact_text(text) == text
