"""Property tests: generated secrets never survive; text without secrets comes out unchanged."""

from __future__ import annotations

import json
import os
import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from redactkit import WORDS, secrets

from collector.redact import Redactor

KEY = b"property-test-key-0123456789abcd"
# Bounded for CI; TF_REDACT_EXAMPLES=5000 for a deeper search.
EXAMPLES = int(os.environ.get("TF_REDACT_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Surrounding text: anything, separated from the secret as text is (space, quote, newline...).
SURROUND = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60
)
SEPARATORS = st.sampled_from([" ", "\n", "\t", '"', "'", " (", ") ", ", ", "; ", "[", "] "])


@SETTINGS
@given(secret=secrets(), before=SURROUND, after=SURROUND, left=SEPARATORS, right=SEPARATORS)
def test_generated_secrets_never_survive(
    secret: tuple[str, str], before: str, after: str, left: str, right: str
) -> None:
    text, must_go = secret
    assume(must_go not in before + left and must_go not in right + after)
    low = before.lower()
    # A version word or a comparison right before a dotted quad makes it a version (documented).
    assume(
        "rsion" not in low[-24:] and "lease" not in low[-24:] and not before.endswith(("=", "~"))
    )
    out = Redactor(key=KEY).redact_text(before + left + text + right + after)
    assert must_go not in out


# Lines that name a secret without holding one: whole lines, so that nothing generated after
# them can become their value (`token: <word>` would be a pair, rightly redacted).
MENTIONS = st.sampled_from(
    [
        "\ntoken expired\n", "\npassword field is empty\n", "\ninvalid token: token is expired\n",
        "\nsecretName: tensor-fusion-webhook-secret\n", "\nmax_tokens=512\n", '\n"key": "nvidia.com/gpu"\n',
        "\nauthType: accessKey\n", "\nBearer authentication required\n", "\nbasic authentication failed\n",
        '\nerr="failed to get token: connection refused"\n', "\npassword authentication failed\n",
    ]
)  # fmt: skip
SAFE_CHARS = st.text(
    alphabet=string.digits + " \n\t,;()[]{}:=_/@#%&*!?+~" + string.ascii_uppercase[:10], max_size=8
)


@SETTINGS
@given(
    parts=st.lists(st.one_of(WORDS, SAFE_CHARS, MENTIONS), max_size=40),
    seps=st.lists(st.sampled_from([" ", "", "\n", ", "]), max_size=40),
)
def test_text_without_secrets_is_byte_identical(parts: list[str], seps: list[str]) -> None:
    text = "".join(p + (seps[i] if i < len(seps) else " ") for i, p in enumerate(parts))
    assert Redactor(key=KEY).redact_text(text) == text


@settings(max_examples=max(60, EXAMPLES // 3), deadline=None)
@given(
    doc=st.recursive(
        st.one_of(
            st.text(max_size=20),
            st.integers(),
            st.booleans(),
            st.none(),
            secrets().map(lambda s: s[0]),
        ),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(
                st.sampled_from(["password", "name", "value", "token", "podIP", "msg", "env"]),
                children,
                max_size=4,
            ),
        ),
        max_leaves=12,
    )
)
def test_redacted_json_stays_valid_json(doc: object) -> None:
    r = Redactor(key=KEY)
    text = json.dumps(r.redact_object(doc), indent=1, ensure_ascii=False)
    json.loads(r.redact_text(text))
