"""Property tests: generated secrets never survive; text without secrets comes out unchanged."""

from __future__ import annotations

import base64
import json
import os
import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from collector.redact import Redactor
from collector.redact.names import is_placeholder_value

KEY = b"property-test-key-0123456789abcd"
# Bounded for CI; TF_REDACT_EXAMPLES=5000 for a deeper search.
EXAMPLES = int(os.environ.get("TF_REDACT_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def _mixed(draw: st.DrawFn, n: int, alphabet: str = ALNUM) -> str:
    """Random like a generated key: both cases and a digit (as every real generator gives)."""
    body = draw(st.text(alphabet=alphabet, min_size=n, max_size=n))
    return "A" + body[1:-2] + "z7"


@st.composite
def secrets(draw: st.DrawFn) -> tuple[str, str]:
    """(text to embed, the part that must not survive)."""
    kind = draw(
        st.sampled_from(
            [
                "jwt", "github", "github-pat", "aws", "hf", "openai", "ngc", "slack", "kubeadm",
                "pem", "pem-b64", "bearer", "password", "url", "api-key", "ipv4", "host", "ula",
                "license-env",
            ]
        )
    )  # fmt: skip
    if kind == "jwt":
        v = (
            "eyJ"
            + _mixed(draw, 20, B64URL)
            + ".eyJ"
            + _mixed(draw, 30, B64URL)
            + "."
            + _mixed(draw, 43, B64URL)
        )
        return v, v
    if kind == "github":
        v = draw(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])) + _mixed(draw, 36)
        return v, v
    if kind == "github-pat":
        v = "github_pat_" + _mixed(draw, 82, ALNUM + "_")
        return v, v
    if kind == "aws":
        v = draw(st.sampled_from(["AKIA", "ASIA"])) + draw(
            st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16)
        )
        return v, v
    if kind == "hf":
        v = "hf_" + _mixed(draw, 34, string.ascii_letters)
        return v, v
    if kind == "openai":
        v = draw(st.sampled_from(["sk-", "sk-proj-"])) + _mixed(draw, 48)
        return v, v
    if kind == "ngc":
        v = "nvapi-" + _mixed(draw, 64, B64URL)
        return v, v
    if kind == "slack":
        path = (
            "T" + _mixed(draw, 8).upper() + "/B" + _mixed(draw, 10).upper() + "/" + _mixed(draw, 24)
        )
        return "https://hooks.slack.com/services/" + path, path
    if kind == "kubeadm":
        alphabet = string.ascii_lowercase + string.digits
        v = (
            draw(st.text(alphabet=alphabet, min_size=5, max_size=5))
            + "7."
            + draw(st.text(alphabet=alphabet, min_size=16, max_size=16))
        )
        return v, v
    if kind == "pem":
        body = "\n".join(_mixed(draw, 64, ALNUM + "+/") for _ in range(3))
        label = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]))
        return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----", body
    if kind == "pem-b64":
        body = _mixed(draw, 64, ALNUM + "+/")
        v = base64.b64encode(
            f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n".encode()
        ).decode()
        return v, v
    if kind == "bearer":
        v = _mixed(draw, 32, ALNUM + "._-")
        return "Authorization: Bearer " + v, v
    if kind in ("password", "api-key", "license-env"):
        v = draw(st.text(alphabet=ALNUM + "!@#$%^*_+~./-", min_size=6, max_size=24))
        assume(not is_placeholder_value(v) and not v.startswith(("-", "$", "/", "./", "~/")))
        name = {"password": "password", "api-key": "x-api-key", "license-env": "TF_LICENSE"}[kind]
        form = draw(st.sampled_from(["=", "line", "mid"])) if kind != "license-env" else "="
        if form == "line":  # a YAML/describe line
            return f"\n  {name}: {v}\n", v
        if form == "mid":  # inside a sentence: a value that looks generated, as real ones do
            v += "9"
            return f"with {name}: {v}", v
        return f"{name}={v}", v
    if kind == "url":
        v = draw(st.text(alphabet=ALNUM + "!$%*+~-", min_size=6, max_size=20))
        return f"postgres://tf:{v}@db.example.com:5432/tf", v
    if kind in ("ipv4", "host"):
        first = draw(st.sampled_from(["10", "172.16", "172.31", "192.168", "100.64", "100.127"]))
        rest = [str(draw(st.integers(0, 255))) for _ in range(4 - first.count(".") - 1)]
        ip = ".".join([first, *rest])
        if kind == "host":
            return "ip-" + ip.replace(".", "-") + ".ec2.internal", ip.replace(".", "-")
        return ip, ip
    ula = (
        "fd"
        + "".join(draw(st.sampled_from("0123456789abcdef")) for _ in range(2))
        + ":"
        + ":".join(f"{draw(st.integers(1, 0xFFFF)):x}" for _ in range(3))
        + "::"
        + f"{draw(st.integers(1, 0xFFFF)):x}"
    )
    return ula, ula


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


# Text with no secret: realistic log vocabulary, numbers, versions, GPU ids, quantities.
WORDS = st.sampled_from(
    [
        "reconcile", "GPUNode", "gpupool", "hypervisor", "Ready", "Running", "CrashLoopBackOff",
        "tensor-fusion.ai/gpupool", "1.35.2", "v1.30.4-eks-a737599", "5.10.228-219.884.amzn2.x86_64",
        "535.104.05", "80Gi", "1176433344Ki", "500m", "tflops=312.5", ":8000", "127.0.0.1:8080",
        "0.0.0.0", "8.8.8.8", "2025-03-01T09:10:05Z", "I0301 09:10:05.123456", "GPU-337d5efe-90a4-32c4-afcb-78ea5e3a5606",
        "gpu-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "sha256:" + "ab" * 32,
        "tensorfusion/tensor-fusion-operator:1.35.2", '"key": "nvidia.com/gpu"', "{", "}", "[", "]",
        "=", ":", ",", "\n", "  ", "-", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "connection refused", "err=", "msg=", "level=info",
    ]
)  # fmt: skip
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
