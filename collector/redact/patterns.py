"""Pattern finders for secrets in any text: each finds spans, the pseudonyms name them.

Every pattern starts with a literal (`eyJ` for a JWT, `ghp_` for a GitHub token, ...) and
boundaries are checked on the matches: `re` searches a literal prefix with a fast scan but
tries a leading look-behind at every position.
Shapes come first (a JWT is a JWT wherever it is); pairs (`password=...`) are in pairs.py.
"""

from __future__ import annotations

import base64
import binascii
import re
import string

from .scan import Finder, Scan
from .spans import Hit

# --- PEM private keys: multi-line, or with the newlines escaped inside JSON strings.
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# When the END line is missing (a truncated log), the key body runs as far as base64 does.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=\s]|\\[nrt]|(?:Proc-Type|DEK-Info):[^\n\\]*)*")
_PEM_MAX = 64 * 1024


def _pem(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    pos = 0
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return hits
        end = _PEM_END.search(text, begin.end(), begin.end() + _PEM_MAX)
        stop = end.end() if end else _PEM_BODY.match(text, begin.end()).end()
        # One key, one placeholder: a key inside a JSON string has its newlines escaped.
        original = _unescape(text[begin.start() : stop])
        hits.append(
            Hit(begin.start(), stop, "private-key", _secret(scan, "private-key", original), 2)
        )
        pos = stop


_ESCAPES = {"\\n": "\n", "\\r": "\r", "\\t": "\t"}


def _unescape(pem: str) -> str:
    return re.sub(r"\\[nrt]", lambda m: _ESCAPES[m.group()], pem) if "\\" in pem else pem


# --- base64 of a PEM private key (a Kubernetes `tls.key`, a kubeconfig client-key-data).
_B64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}")


def _b64_pem(scan: Scan) -> list[Hit]:
    hits = []
    for m in _B64_PEM.finditer(scan.text):
        head = m.group()[:80]
        try:
            decoded = base64.b64decode(head[: len(head) // 4 * 4])
        except (binascii.Error, ValueError):
            continue
        if b"PRIVATE KEY" in decoded:
            hits.append(_hit(scan, m, "private-key", 2))
    return hits


# --- token shapes. No pattern starts with a look-behind: `re` finds a literal prefix (`ghp_`)
# with a fast scan but tries an assertion at every position, so the boundary on the left is
# checked in Python, on the matches only.
_WORD = frozenset(string.ascii_letters + string.digits + "_")
_WORD_DASH = _WORD | {"-"}
_ALNUM = frozenset(string.ascii_letters + string.digits)
_SHAPES: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    (
        "jwt",
        re.compile(
            r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
            r"(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?"  # JWE has five parts
        ),
        _WORD_DASH,
    ),
    # base64 of {"auths": ...}: a whole .dockerconfigjson value.
    ("docker-auth", re.compile(r"eyJhdXRocyI6[A-Za-z0-9+/]*={0,2}"), _ALNUM),
    (
        "github-token",
        re.compile(
            r"gh[pousr]_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])|github_pat_[A-Za-z0-9_]{22,255}"
        ),
        _WORD,
    ),
    (
        "aws-access-key-id",
        re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _ALNUM,
    ),
    ("gcp-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"), _WORD_DASH),
    ("slack-token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), _ALNUM),
    ("ngc-key", re.compile(r"nvapi-[A-Za-z0-9_-]{40,}"), _WORD_DASH),
)
_HF = re.compile(r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])")
_SK = re.compile(
    r"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])"
)


def _left_free(text: str, start: int, chars: frozenset[str]) -> bool:
    """Nothing of `chars` right before `start`; an escaped newline or tab (`\\n` inside a JSON
    string: a line of a log kept in an object) is a boundary, not the letter n."""
    return (
        start == 0
        or text[start - 1] not in chars
        or (start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt")
    )


# kubeadm bootstrap tokens (`abcdef.0123456789abcdef`): the bare shape is kept out of file and
# host names by its boundaries and by needing a digit; a token named as such needs neither.
_KUBEADM = re.compile(r"\.[a-z0-9]{16}(?![A-Za-z0-9_.\-/])")
_KUBEADM_HEAD = re.compile(r"[a-z0-9]{6}")
_KUBEADM_LEFT = frozenset(string.ascii_letters + string.digits + "_.-/")
_KUBEADM_CONTEXT = re.compile(r"(?i)(?:token|join|bootstrap)")


def _kubeadm(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    for m in _KUBEADM.finditer(text):
        start = m.start() - 6
        if start < 0 or not _KUBEADM_HEAD.fullmatch(text, start, m.start()):
            continue
        if not _left_free(text, start, _KUBEADM_LEFT):
            continue
        token = text[start : m.end()]
        if any(c.isdigit() for c in token) or _KUBEADM_CONTEXT.search(
            text, max(0, start - 40), start
        ):
            hits.append(
                Hit(start, m.end(), "kubeadm-token", _secret(scan, "kubeadm-token", token), 2)
            )
    return hits


def _random_looking(s: str, *, need_digit: bool) -> bool:
    return (
        any(c.isupper() for c in s)
        and any(c.islower() for c in s)
        and (not need_digit or any(c.isdigit() for c in s))
    )


def _shapes(scan: Scan) -> list[Hit]:
    hits = []
    text = scan.text
    for kind, pattern, left in _SHAPES:
        for m in pattern.finditer(text):
            if _left_free(text, m.start(), left):
                hits.append(_hit(scan, m, kind, 2))
                if kind == "aws-access-key-id":
                    pair = _AWS_SECRET_AFTER.match(text, m.end())
                    if pair is not None:
                        hits.append(_hit(scan, pair, "aws-secret-access-key", 2, group=1))
    if "hf_" in text:
        for m in _HF.finditer(text):
            if _left_free(text, m.start(), _WORD) and _random_looking(
                m.group()[3:], need_digit=False
            ):
                hits.append(_hit(scan, m, "huggingface-token", 2))
    if "sk-" in text:
        for m in _SK.finditer(text):
            if not _left_free(text, m.start(), _WORD_DASH):
                continue
            body = m.group().rsplit("-", 1)[-1] if m.group().count("-") > 1 else m.group()[3:]
            if _random_looking(m.group()[3:], need_digit=True) or len(body) >= 40:
                hits.append(_hit(scan, m, "openai-key", 2))
    return hits


# --- an AWS secret access key right after its key id (credentials CSV, `aws configure list`).
_AWS_SECRET_AFTER = re.compile(r"[\s,;:|\"'=]{1,6}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


# --- Authorization header values, wherever they appear (headers, Go maps, curl -H). "Bearer"
# is found in the lowered text, the token in the original; "Basic" and "Token" are ordinary
# words, so they count only right after an Authorization name (found by its keyword, "auth").
_BEARER = re.compile(r"bearer\s+")
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]{8,}=*(?![A-Za-z0-9._~+/=-])")
_AUTHORIZATION = re.compile(r"(?:proxy-)?authorization[\"']?\s*[:=]?\s*[\[\"']?\s*(basic|token)\s+")


def _bearer(scan: Scan) -> list[Hit]:
    hits, text, lower = [], scan.text, scan.lower
    for m in _BEARER.finditer(lower):
        t = _TOKEN.match(text, m.end())
        if t is None or not _left_free(lower, m.start(), _WORD) or not _token_like(t.group()):
            continue
        token = t.group()
        kind = "jwt" if token.startswith("eyJ") and token.count(".") >= 2 else "bearer-token"
        hits.append(Hit(t.start(), t.end(), kind, _secret(scan, kind, token), 2))
    for pos in scan.keyword_positions:
        if not lower.startswith("auth", pos):
            continue
        start = pos - 6 if lower.startswith("proxy-", pos - 6) else pos
        m = _AUTHORIZATION.match(lower, start)
        if m is None:
            continue
        t = _TOKEN.match(text, m.end())
        if t is not None:
            kind = "basic-auth" if m.group(1) == "basic" else "bearer-token"
            hits.append(Hit(t.start(), t.end(), kind, _secret(scan, kind, t.group()), 2))
    return hits


def _token_like(s: str) -> bool:
    # "Bearer authentication" is prose; a token has a digit, punctuation, or mixed case.
    return (
        any(c.isdigit() for c in s)
        or any(c in "._~+/=" for c in s)
        or (len(s) >= 16 and _random_looking(s, need_digit=False))
    )


# --- scheme://user:password@host (the user stays: it helps and it is rarely secret).
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@\"'<>\[\]]*:([^\s/?#\"'<>]+)@(?=[A-Za-z0-9\[])")


def _url_credentials(scan: Scan) -> list[Hit]:
    hits = []
    for m in _URL_CREDENTIALS.finditer(scan.text):
        if not m.group(1).startswith("<redacted:"):
            hits.append(_hit(scan, m, "password", 2, group=1))
    return hits


# --- Slack incoming webhooks: the path is the credential.
_SLACK_HOOK = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{8,})")


def _slack(scan: Scan) -> list[Hit]:
    return [_hit(scan, m, "slack-webhook", 2, group=1) for m in _SLACK_HOOK.finditer(scan.text)]


# --- NVIDIA NGC: `docker login nvcr.io -u '$oauthtoken' -p <key>`. Personal keys in the
# current format are the `nvapi-` shape; legacy keys (base64 of "<26 chars>:<uuid>") have no
# shape of their own and are found by their names (NGC_API_KEY, --password) and by value_kind.
_NGC_LOGIN = re.compile(r"\$oauthtoken['\"]?\s+(?:-p|--password)[ =]['\"]?([^\s'\"]+)")
_NGC_LEGACY = re.compile(r"[A-Za-z0-9+/]{84}")
_NGC_DECODED = re.compile(
    rb"[a-z0-9]{20,32}:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _ngc(scan: Scan) -> list[Hit]:
    return [_hit(scan, m, "ngc-key", 2, group=1) for m in _NGC_LOGIN.finditer(scan.text)]


def _is_legacy_ngc(value: str) -> bool:
    if not _NGC_LEGACY.fullmatch(value):
        return False
    try:
        return _NGC_DECODED.fullmatch(base64.b64decode(value)) is not None
    except (binascii.Error, ValueError):
        return False


# --- what a value is, by its shape alone (used for values found under sensitive names, so
# the same secret gets the same kind in an env var and in a log line).
_VALUE_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")),
    ("github-token", re.compile(r"gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255}")),
    ("aws-access-key-id", re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")),
    ("huggingface-token", re.compile(r"hf_[A-Za-z0-9]{30,}")),
    ("openai-key", re.compile(r"sk-[A-Za-z0-9_-]{20,}")),
    ("ngc-key", re.compile(r"nvapi-[A-Za-z0-9_-]{40,}")),
    (
        "private-key",
        re.compile(r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY.*|LS0tLS1CRUdJTi[A-Za-z0-9+/=]*"),
    ),
    ("docker-auth", re.compile(r"eyJhdXRocyI6[A-Za-z0-9+/=]*")),
)


_PRINTABLE_PAIR = re.compile(rb"[\x21-\x7e]+:[\x20-\x7e]*")


def is_basic_credential(value: str) -> bool:
    """base64 of "user:password" (a Docker `auth`, HTTP Basic)."""
    if len(value) < 8 or len(value) % 4:
        return False
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return _PRINTABLE_PAIR.fullmatch(decoded) is not None


def refine_kind(kind: str, value: str) -> str:
    """The kind of a value found under a name: its own shape first, then the name's kind."""
    shaped = value_kind(value)
    if shaped is not None:
        return shaped
    if kind == "auth" and is_basic_credential(value):
        return "docker-auth"
    return kind


def value_kind(value: str) -> str | None:
    for kind, pattern in _VALUE_KINDS:
        if pattern.fullmatch(value):
            return kind
    return "ngc-key" if len(value) == 84 and _is_legacy_ngc(value) else None


def _secret(scan: Scan, kind: str, original: str) -> str:
    return scan.pseudonyms.secret(kind, original)


def _hit(scan: Scan, m: re.Match[str], kind: str, priority: int, group: int = 0) -> Hit:
    return Hit(m.start(group), m.end(group), kind, _secret(scan, kind, m.group(group)), priority)


# No hints where the finder's own patterns start with a literal: `re` searches for that
# literal as fast as a hint would, so a hint would only scan the text twice.
FINDERS: tuple[Finder, ...] = (
    Finder("private-key", _pem),
    Finder("private-key-base64", _b64_pem),
    Finder("token-shapes", _shapes),
    Finder("kubeadm-token", _kubeadm),
    Finder("authorization", _bearer),
    Finder("url-credentials", _url_credentials),
    Finder("slack-webhook", _slack),
    Finder("ngc", _ngc),
)
