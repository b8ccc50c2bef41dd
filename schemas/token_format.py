"""One row of the token-format catalogue (tokens.FORMATS) and what the rows are built from:
the boundary sets, the body pieces, the check that tells a generated body from a name, the
public rule sets a row may cite, and the made-up bodies of the examples."""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field

WORD = frozenset(string.ascii_letters + string.digits + "_")
WORD_DASH = WORD | {"-"}
ALNUM = frozenset(string.ascii_letters + string.digits)
WORD_DOT = WORD | {"-", "."}


@dataclass(frozen=True)
class TokenFormat:
    kind: str  # the placeholder's kind
    platform: str
    prefix: str  # literal; every match starts with it (empty: `anchor` gates the search)
    body: str  # regex after the prefix, no capturing groups, ASCII classes only
    # A page that states the shape: the platform's own where it has one, else the public rule
    # set the shape comes from (a RULE_SET_SOURCES address: `from_rule_set` says which).
    source: str
    examples: tuple[str, ...]
    near_misses: tuple[str, ...] = ()
    left: frozenset[str] = WORD  # none of these may stand right before a match
    # Extra test on the whole match (a decoded header, a mix of cases) where the regex alone
    # would also match identifiers or words.
    check: Callable[[str], bool] | None = None
    # Part of the match after the prefix that is not secret (a webhook URL's fixed path).
    head: str = ""
    # Shape alone proves a secret: the leak scan reports it. False for formats the engine
    # finds in context (kubeadm's `abcdef.0123456789abcdef` is also a file name's shape).
    standalone: bool = True
    anchor: str = ""  # a literal every match contains, for formats without a prefix
    # The public rule sets that hold this format by shape, as "<rule set>:<rule id>"
    # (RULE_SET_SOURCES names them); empty where only the platform's page states it.
    rule_sets: tuple[str, ...] = field(kw_only=True)
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", re.compile(self.regex))

    @property
    def regex(self) -> str:
        return re.escape(self.prefix) + self.head + self.body

    @property
    def from_rule_set(self) -> str:
        """The rule set whose text is this row's source ("" where a page of the platform's,
        or another page that states the shape, is)."""
        return next((n for n, url in RULE_SET_SOURCES.items() if self.source.startswith(url)), "")


# The public rule sets, at the commit that was read: a row whose shape no platform page states
# cites its rule set's file (rule_set_source) and names the rule in `rule_sets`.
RULE_SET_SOURCES = {
    "gitleaks": "https://github.com/gitleaks/gitleaks/blob/b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b/config/gitleaks.toml",
    "trufflehog": "https://github.com/trufflesecurity/trufflehog/tree/3ab759fef4bb5935d4fe9ac68b503d05346b8364/pkg/detectors/",
    "detect-secrets": "https://github.com/Yelp/detect-secrets/blob/5e141933554a0b74e7341841f318be21e895339c/detect_secrets/plugins/",
}


def rule_set_source(rule: str) -> str:
    """The address of one rule ("gitleaks:linear-api-key", "trufflehog:notion",
    "detect-secrets:telegram_token") in its rule set's text."""
    name, rule_id = rule.split(":", 1)
    base = RULE_SET_SOURCES[name]
    if name == "gitleaks":
        return f"{base}#{rule_id}"
    return base + rule_id + (".py" if name == "detect-secrets" else "")


def generated(body: str) -> bool:
    """Looks generated rather than named: a digit, or capitals spread through it as random
    letters have them (a camelCase identifier has one per word: `hf_requiredFieldsMissing`)."""
    letters = [c for c in body if c.isalpha()]
    if any(c.isdigit() for c in body):
        return any(c.isupper() for c in letters) or len(body) >= 32
    uppers = sum(c.isupper() for c in letters)
    return bool(letters) and 0.25 <= uppers / len(letters) <= 0.75


B64 = "[A-Za-z0-9+/]"
END = "(?![A-Za-z0-9_-])"  # no token character after an exact-length body
BECH32 = "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]"


def fake(n: int, alphabet: str = "FAKEfake0123456789") -> str:
    """An obviously made-up body of exactly n characters from `alphabet`, for the examples."""
    return (alphabet * (n // len(alphabet) + 1))[:n]


# For bodies of the base64url alphabet: every run between a `-` and a `_` holds capitals, small
# letters and digits, as a random token's runs do (`FAKE-fake_` would give runs of one class).
URLSAFE = "FAKEfake0123456789-FAKEfake0123456789_"


def crc32(text: str) -> str:
    """The CRC32 of an example's payload in 8 capital hex digits: Atlassian's and Cloudflare's
    newer tokens end in it (CredSweeper's ValueAtlassianTokenCheck and ValueCloudFlareCheck
    drop a value without it)."""
    return f"{binascii.crc32(text.encode()):08X}"


def b64(text: str | bytes, *, urlsafe: bool = False) -> str:
    """Base64 of an example's encoded part (a token that is base64 of JSON or of a macaroon),
    unpadded."""
    raw = text.encode() if isinstance(text, str) else text
    out = base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)
    return out.decode().rstrip("=")


UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
