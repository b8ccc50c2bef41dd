"""Must-redact and must-not-redact, for every kind in every context (table-driven)."""

from __future__ import annotations

import base64
import json

import pytest

from collector.redact import Redactor

KEY = b"table-test-key-0123456789abcdef!"

JWT = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IkRmV3p4In0.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0"
    ".Q2hlY2tTaWduYXR1cmUxMjM0NTY3ODkwYWJjZGVm"
)
PEM_BODY = "MIIEpAIBAAKCAQEA7Zq3x9VbQ2R4sT8uWkL1mN0pOaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789ab"
B64_PEM = base64.b64encode(
    f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n".encode()
).decode()
DOCKER_AUTH = base64.b64encode(b"robot$ci:Zx8Kq2LmP9wRt4").decode()

# kind -> (secret value, the placeholder kind expected)
SHAPES: dict[str, tuple[str, str]] = {
    "jwt": (JWT, "jwt"),
    "github-classic": ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "github-token"),
    "github-oauth": ("gho_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8", "github-token"),
    "github-server": ("ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a", "github-token"),
    "github-pat": (
        "github_pat_11ABCDEFG0" + "a1B2c3D4e5F6g7H8i9J0_k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6",
        "github-token",
    ),
    "aws-access-key-id": ("AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"),
    "aws-session-key-id": ("ASIAY34FZKBOKMUTVV7A", "aws-access-key-id"),
    "huggingface": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "huggingface-token"),
    "openai": ("sk-" + "Ab3dEf6hIj9kLmNoPqRsTuVwXyZ0123456789abcdEFGH", "openai-key"),
    "openai-project": (
        "sk-proj-" + "Ab3dEf6hIj9kLmNoPqRs_TuVwXyZ-0123456789abcdEFGHijkl",
        "openai-key",
    ),
    "ngc": (
        "nvapi-" + "Qw3rTy8UiOp1AsDfGhJkL2zXcVbNm4QwErTyUiOp5AsDfGhJkLzXcVbNm6Qw7Er8",
        "ngc-key",
    ),
    "gcp-api-key": ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "gcp-api-key"),
    "slack-token": ("xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"),
    "kubeadm": ("abcdef.0123456789abcdef", "kubeadm-token"),
    "private-key-base64": (B64_PEM, "private-key"),
    "docker-config-base64": (
        base64.b64encode(b'{"auths":{"r.io":{"auth":"eDp5"}}}').decode(),
        "docker-auth",
    ),
}

# Contexts a shaped secret must be found in; {s} is the secret.
CONTEXTS = [
    "I0301 09:10:05.123456       1 controller.go:42] using credentials {s} for the registry",
    '{{"level":"info","msg":"loaded","value":"{s}"}}',
    "config:\n  value: {s}\n  other: 1\n",
    "config:\n  value: '{s}'\n",
    "SOME_SETTING={s}",
    "--flag={s}",
    "--flag {s}",
    "https://example.com/callback?x={s}&y=1",
    "X-Custom-Header: {s}",
    '"{s}"',
    "({s})",
    "[{s}],",
    "the value at the end of the line is {s}",
    "{s}",
    "\tindented\t{s}\n",
    '"args": ["--x", "{s}"]',
]


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_are_redacted_in_every_context(name: str, context: str) -> None:
    secret, kind = SHAPES[name]
    out = Redactor(key=KEY).redact_text(context.format(s=secret))
    assert secret not in out
    assert f"<redacted:{kind}:" in out


# Secrets known by their name: (text, secret, kind). Every form a name can take.
PAIRS = [
    ("password=hunter2!x", "hunter2!x", "password"),
    ("db password=hunter2!x user=bob", "hunter2!x", "password"),
    ('password="two words"', "two words", "password"),
    ("password='quoted one'", "quoted one", "password"),
    ('"password": "s3cr3t-json"', "s3cr3t-json", "password"),
    ('{"password":"s3cr3t-tight"}', "s3cr3t-tight", "password"),
    ('{"db":{"password":12345678}}', "12345678", "password"),
    ('"{\\"password\\":\\"escaped-inner\\"}"', "escaped-inner", "password"),
    ("  password: plain yaml value # comment\n", "plain yaml value", "password"),
    ("- password: in a list\n", "in a list", "password"),
    (
        "greptime:\n  password: |\n    block-line-one\n    block-line-two\nnext: 1\n",
        "block-line-one",
        "password",
    ),
    ("TSDB_MYSQL_PASSWORD=Gr3pt1me", "Gr3pt1me", "password"),
    ("PGPASSWORD=pgpass123", "pgpass123", "password"),
    ("--password=flagpass1", "flagpass1", "password"),
    ("--password flagpass2", "flagpass2", "password"),
    ("mysql --user root --password=flagpass3 db", "flagpass3", "password"),
    ("map[password:gomappass user:x]", "gomappass", "password"),
    ("&{Username:admin Password:gostructpw}", "gostructpw", "password"),
    ("https://example.com/login?user=x&passwd=urlpass9&next=/", "urlpass9", "password"),
    ("postgres://tf:urlcred42@db.internal:5432/tf", "urlcred42", "password"),
    ("redis://:onlypass77@redis:6379/0", "onlypass77", "password"),
    ("TF_LICENSE=tflicensevalue123", "tflicensevalue123", "license"),
    ("TF_LICENSE_SIGN=c2lnbmF0dXJlLXZhbHVl", "c2lnbmF0dXJlLXZhbHVl", "license"),
    ("client_secret=oauthclientsecret", "oauthclientsecret", "secret"),
    ('"clientSecret": "camelsecret"', "camelsecret", "secret"),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "secret",
    ),
    ("aws_session_token = FwoGZXIvYXdzEBYaDsessiontoken", "FwoGZXIvYXdzEBYaDsessiontoken", "token"),
    ("api_key=abcdef0123456789", "abcdef0123456789", "api-key"),
    ("apikey: 0123456789abcdef\n", "0123456789abcdef", "api-key"),
    ("X-Api-Key: headerkey0123", "headerkey0123", "api-key"),
    ("curl -H 'x-api-key: curlheaderkey' https://x", "curlheaderkey", "api-key"),
    ("OPENAI_API_KEY=not-shaped-key-value", "not-shaped-key-value", "api-key"),
    ("NGC_API_KEY=legacyngckeyvalue", "legacyngckeyvalue", "api-key"),
    ("HF_TOKEN=hfplainvalue", "hfplainvalue", "token"),
    ("enrollToken: agent-enroll-token-1\n", "agent-enroll-token-1", "token"),
    ("--token=abcdEFGH1234", "abcdEFGH1234", "token"),
    ("token: plaintokenvalue\n", "plaintokenvalue", "token"),
    ('"token": "kubeconfigtoken"', "kubeconfigtoken", "token"),
    ("Authorization: Bearer opaque0123456789token", "opaque0123456789token", "bearer-token"),
    ('"Authorization": "Bearer jsonbearer0123456789"', "jsonbearer0123456789", "bearer-token"),
    ("map[Authorization:[Bearer gomapbearer012345]]", "gomapbearer012345", "bearer-token"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' x", "dXNlcjpwYXNzd29yZA==", "basic-auth"),
    ("Authorization: Token deadbeefcafe1234", "deadbeefcafe1234", "bearer-token"),
    (
        f'{{"auths":{{"registry.example.com":{{"auth":"{DOCKER_AUTH}"}}}}}}',
        DOCKER_AUTH,
        "docker-auth",
    ),
    ("client-key-data: LS0tLS1CRUdJTiBgarbage", "LS0tLS1CRUdJTiBgarbage", "private-key"),
    (
        "https://storage.example.com/b?sv=2021&sig=sasSignatureValue%3D&se=1",
        "sasSignatureValue%3D",
        "signature",
    ),
    ("credentials=user:pass:more", "user:pass:more", "credential"),
    (
        f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----",
        PEM_BODY,
        "private-key",
    ),
    (
        f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{PEM_BODY}\\n-----END PRIVATE KEY-----\\n"',
        PEM_BODY,
        "private-key",
    ),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n(truncated", PEM_BODY, "private-key"),
    (
        f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n-----END EC PRIVATE KEY-----",
        PEM_BODY,
        "private-key",
    ),
    (
        f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PEM_BODY}\n-----END ENCRYPTED PRIVATE KEY-----",
        PEM_BODY,
        "private-key",
    ),
    (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PEM_BODY}\n-----END PGP PRIVATE KEY BLOCK-----",
        PEM_BODY,
        "private-key",
    ),
    (
        "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKlMnOpQrStUvWx",
        "slack-webhook",
    ),
    ("docker login nvcr.io -u '$oauthtoken' -p bGVnYWN5bmdja2V5", "bGVnYWN5bmdja2V5", "ngc-key"),
    (
        "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws-secret-access-key",
    ),
    ("- name: API_TOKEN\n  value: yamlenvtoken\n", "yamlenvtoken", "token"),
    ('{"name": "TF_LICENSE", "value": "jsonenvlicense"}', "jsonenvlicense", "license"),
    ("{Name:DB_PASSWORD Value:goenvpass ValueFrom:nil}", "goenvpass", "password"),
    (
        "kubeadm join 10.0.0.1:6443 --token abcdef.ghijklmnopqrstuv",
        "abcdef.ghijklmnopqrstuv",
        "kubeadm-token",
    ),
]


@pytest.mark.parametrize(("text", "secret", "kind"), PAIRS, ids=[p[0][:40] for p in PAIRS])
def test_named_secrets_are_redacted(text: str, secret: str, kind: str) -> None:
    out = Redactor(key=KEY).redact_text(text)
    assert secret not in out, out
    assert f"<redacted:{kind}:" in out, out


# Internal addresses: (text, original that must go, what must stay around it).
ADDRESSES = [
    ("dial tcp 10.0.3.17:443: connect: connection refused", "10.0.3.17", ":443: connect"),
    ('"podIP": "10.244.1.12"', "10.244.1.12", '"podIP": "'),
    ("podCIDR: 10.244.0.0/16", "10.244.0.0/16", "podCIDR: "),
    ("hostIP=172.20.5.9 ", "172.20.5.9", "hostIP="),
    ("node 192.168.1.100 ready", "192.168.1.100", "node "),
    ("cgnat 100.64.0.7 peer", "100.64.0.7", "cgnat "),
    ("http://10.96.0.1:443/api", "10.96.0.1", "http://"),
    ("native+10.42.0.57+8000+worker-0", "10.42.0.57", "native+"),
    ("cn-hangzhou.192.168.0.100", "192.168.0.100", "cn-hangzhou."),
    ("ip-10-0-3-17.ec2.internal", "ip-10-0-3-17", ".ec2.internal"),
    ("hypervisor-ip-10-0-3-17.us-west-2.compute.internal", "10-0-3-17", "hypervisor-ip-"),
    ("10-244-1-12.default.pod.cluster.local", "10-244-1-12", ".default.pod"),
    ("range 10.0.0.1-10.0.0.9", "10.0.0.9", "range "),
    ('{"msg":"connect\\n10.0.0.5"}', "10.0.0.5", "connect\\n"),
    ("[fd00:10:244::5]:8080", "fd00:10:244::5", "]:8080"),
    ("fd12:3456:789a:1::1/64", "fd12:3456:789a", "/64"),
    ("fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a", "%eth0"),
    ("end of line 10.1.2.3", "10.1.2.3", "end of line"),
]


@pytest.mark.parametrize(
    ("text", "original", "kept"), ADDRESSES, ids=[a[0][:40] for a in ADDRESSES]
)
def test_internal_addresses_are_pseudonymised(text: str, original: str, kept: str) -> None:
    out = Redactor(key=KEY).redact_text(text)
    assert original not in out, out
    assert kept in out, out


def test_an_address_keeps_its_range_and_cidr_its_network() -> None:
    r = Redactor(key=KEY)
    for text, prefix in (
        ("10.0.3.17", "10."),
        ("172.20.5.9", "172."),
        ("192.168.1.1", "192.168."),
        ("100.64.0.7", "100."),
    ):
        out = r.redact_text(text)
        assert out.startswith(prefix) and out != text
    second = int(r.redact_text("172.20.5.9").split(".")[1])
    assert 16 <= second <= 31
    cgnat = int(r.redact_text("100.64.0.7").split(".")[1])
    assert 64 <= cgnat <= 127
    net = r.redact_text("10.244.0.0/16")
    pod = r.redact_text("10.244.7.9")
    assert net.endswith(".0.0/16") and pod.split(".")[:2] == net.split(".")[:2]
    assert r.redact_text("fd00::1").startswith("fd")
    assert r.redact_text("fe80::1").startswith("fe80::")


# Values that must come out byte-identical.
KEEP = [
    "image: tensorfusion/tensor-fusion-hypervisor:2.15.0",
    "imageID: docker.io/tensorfusion/tensor-fusion-operator@sha256:" + "3f9a1c" * 10 + "abcd",
    "containerID: containerd://" + "a1b2c3d4" * 8,
    "NVIDIA_VISIBLE_DEVICES=GPU-337d5efe-90a4-32c4-afcb-78ea5e3a5606",
    "MIG-9b4c1a2e-1d3f-5a6b-8c7d-0e1f2a3b4c5d",
    "name: gpu-337d5efe-90a4-32c4-afcb-78ea5e3a5606",
    "uid: 6f1c2b9e-7a43-4c1e-9a57-0d3f1e6b2a10",
    "kernelVersion: 5.10.228-219.884.amzn2.x86_64",
    "driver 535.104.05, cuda 12.2, cudnn 8.9.7.29, nccl 2.18.3-1",
    'version: 10.2.3.4 and "version":"10.0.1.6" and TENSORRT_VERSION=10.0.1.6',
    "tensorrt==10.0.1.6 libnvinfer10=10.0.1.6-1+cuda12.4 v10.0.0.1 10.0.1.6+cuda12.4",
    "1.10.0.3.17 is a five-part version",
    "timestamp 2025-03-01T09:10:05.123456Z and I0301 09:10:05.123456",
    "vram: 80Gi tflops: 312 memory: 1176433344Ki cpu: 500m",
    "listen tcp :8001: bind: address already in use; port 8000",
    "tensor-fusion.ai/pod-counter-key: abc tensor-fusion.ai/gpupool: shared",
    "secretName: tensor-fusion-webhook-secret",
    'MountVolume.SetUp failed for volume "cert" : secret "tensor-fusion-webhook-secret" not found',
    "secretKeyRef: {name: greptime-secret, key: password}",
    '"valueFrom": {"secretKeyRef": {"key": "password", "name": "db"}}',
    "imagePullSecrets: [{name: regcred}]",
    "token expired",
    "password field is empty",
    'E0301 reconciler.go:12] "Reconciler error" err="failed to get token: connection refused"',
    "invalid token: token is expired",
    'pq: password authentication failed for user "postgres"',
    "Bearer authentication required; basic authentication failed",
    "authType: accessKey",
    "accessKeyPath: /tmp/secret/access-key secretKeyPath: /tmp/secret/secret-key",
    "TF_CUDA_LIB_PATH=/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "SA_TOKEN_VERIFY_ENABLED=true DISABLE_CONNECTION_AUTH=false",
    "max_tokens=512 prompt_tokens: 128 eos_token_id: 2 tokenizer: meta-llama/Llama-3-8B",
    "tolerations: [{key: nvidia.com/gpu, operator: Exists}]",
    '"key": "tensor-fusion.ai/gpupool"',
    'password: ""',
    "password: ${DB_PASSWORD}",
    "token: <none>",
    "password: ********",
    "loopback 127.0.0.1:8080 any 0.0.0.0:9443 metadata 169.254.169.254",
    "public dns 8.8.8.8 and 1.1.1.1",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
    "caBundle: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJzekND",
    "mac 02:42:ac:11:00:02 and time 09:10:05 and ::1",
    "sha256:fe80aa0c" + "0" * 56,
    "std::string and tokio::runtime",
    "The placeholder <redacted:jwt:3f9a1c> stays as it is",
    "monkey keyboard turkey author passed bypass",
    "denied, repository does not exist or may require authorization: server message: insufficient_scope",
    'I0301 09:10:06.000000       1 auth.go:12] "Reconciling" token_manager.go:88] secret.go:7]',
    "DATABASE_URL=postgres://db.internal.example.com:5432/tf",
]


@pytest.mark.parametrize("text", KEEP, ids=[k[:40] for k in KEEP])
def test_diagnostic_values_stay_byte_identical(text: str) -> None:
    assert Redactor(key=KEY).redact_text(text) == text


def test_public_addresses_only_when_asked() -> None:
    text = "resolved 54.231.0.12 and 8.8.8.8 via 10.0.0.2, host ec2-54-231-0-12.compute-1.amazonaws.com"
    assert "54.231.0.12" in Redactor(key=KEY).redact_text(text)
    out = Redactor(key=KEY, public_ips=True).redact_text(text)
    assert "54.231.0.12" not in out and "8.8.8.8" not in out and "10.0.0.2" not in out
    assert "54-231-0-12" not in out
    assert "127.0.0.1" in Redactor(key=KEY, public_ips=True).redact_text("127.0.0.1")


def test_json_stays_json() -> None:
    doc = {
        "password": "x1y2z3",
        "podIP": "10.0.0.1",
        "note": f"Bearer {JWT} -----BEGIN PRIVATE KEY-----\nabc",
        "list": ["--token", "tok123456"],
        "env": [{"name": "TF_LICENSE", "value": "lic-value-1"}],
    }
    text = json.dumps(doc, indent=1)
    out = Redactor(key=KEY).redact_text(text)
    parsed = json.loads(out)
    assert parsed["password"].startswith("<redacted:password:")
    assert "lic-value-1" not in out and JWT not in out
