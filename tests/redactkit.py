"""Secrets as they appear in real text, generated: for the redaction property and fuzz tests
(tests/redact/test_properties.py, tests/fuzz/test_redaction_fuzz.py)."""

from __future__ import annotations

import base64
import json
import string

from hypothesis import assume
from hypothesis import strategies as st

from collector.redact.names import is_placeholder_value

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
                "license-env", "gcp", "slack-token", "basic", "aws-pair", "link-local",
                "docker-auth", "kubeconfig",
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
    if kind == "gcp":
        v = "AIza" + _mixed(draw, 35, B64URL)
        return v, v
    if kind == "slack-token":
        v = draw(st.sampled_from(["xoxb-", "xoxp-"])) + "1234567890-" + _mixed(draw, 24)
        return v, v
    if kind == "basic":
        v = base64.b64encode(f"tf:{_mixed(draw, 12)}".encode()).decode()
        return "Authorization: Basic " + v, v
    if kind == "aws-pair":
        key_id = "AKIA" + draw(
            st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16)
        )
        v = _mixed(draw, 40, ALNUM + "/+")
        return f"{key_id},{v}", v
    if kind == "docker-auth":
        auth = base64.b64encode(f"tf:{_mixed(draw, 12)}".encode()).decode()
        v = base64.b64encode(json.dumps({"auths": {"nvcr.io": {"auth": auth}}}).encode()).decode()
        return v, v
    if kind == "kubeconfig":  # a kubeconfig pasted into a log or a ConfigMap
        v = _mixed(draw, 40, ALNUM + "._-")
        return f"\nusers:\n- name: admin\n  user:\n    token: {v}\n", v
    if kind == "link-local":
        ll = "fe80::" + ":".join(f"{draw(st.integers(1, 0xFFFF)):x}" for _ in range(4))
        return ll, ll
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
