#!/usr/bin/env python3
"""Redaction throughput and recall on a realistic corpus (a measurement, not a test).

    python bench/redact_throughput.py              # >= 50 MB corpus, prints MB/s and recall
    python bench/redact_throughput.py --mb 5       # a smaller corpus
    python bench/redact_throughput.py --workers 2  # processes, for the engine, CLI and sos
    python bench/redact_throughput.py --sos /path/to/sos  # sos clean side by side

Three measurements:

- Recall per kind, per syntax and per depth of JSON string escaping (0-3), and precision:
  every format of the catalogue (tf_support_schemas.tokens) planted from its own examples in
  every syntax of SYNTAXES, under a name that says nothing; generated values planted under
  sensitive names in every syntax; and the held-out corpus (bench/redact_heldout.txt: log,
  config and code lines written before the finders, never tuned against them). Precision:
  the catalogue's near misses and the held-out `keep` cases must come out byte-identical.
- MB/s of the engine alone on one core (one process), and over --workers processes, and its
  recall on the corpus below.
- Side by side, on the corpus written out as files, with the same number of processes and
  each the best of --runs: `tf-collect redact DIR -o OUT` as a user runs it (the console
  script, start-up included) and `sos clean DIR` (sos report's cleaner, when installed:
  `pip install https://github.com/sosreport/sos/archive/refs/tags/4.12.0.tar.gz` in a venv
  of its own). Each is scored on what its output kept of the planted secrets and addresses.

The corpus is what a bundle holds: controller klog lines, JSON-lines hypervisor logs, pod and
node JSON as the API returns them, Helm values. Every secret kind the engine knows is planted
in several contexts, each with a fresh random value, and so are internal addresses and host
names. Recall: the share of planted originals absent from the output. Precision: the share
of values that must stay (image digests, GPU UUIDs, versions, quantities...) still there.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.redact import Redactor
from collector.redact.parallel import default_workers, redact_members, redact_text_member
from collector.redact.spans import PLACEHOLDER
from tf_support_schemas.tokens import FORMATS, PEM, TokenFormat

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
MEMBER_BYTES = 512 * 1024  # a large log or objects file of a real bundle


@dataclass
class Corpus:
    files: dict[str, str] = field(default_factory=dict)
    secrets: list[tuple[str, str]] = field(default_factory=list)  # (kind, original)
    planted_in: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> secrets[a:b]
    addresses: list[str] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)  # must survive unchanged

    @property
    def size(self) -> int:
        return sum(len(t.encode()) for t in self.files.values())


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.corpus = Corpus()
        self.nodes = [self._node_ip() for _ in range(40)]
        self.pod_ips = [
            f"10.244.{self.r.randint(0, 63)}.{self.r.randint(2, 254)}" for _ in range(200)
        ]
        self.gpu_uuids = [self._uuid() for _ in range(80)]
        self.corpus.addresses.extend(sorted(set(self.nodes + self.pod_ips)))
        self.corpus.keep.extend(self.gpu_uuids[:10])

    # ------------------------------------------------------------------ values
    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def _uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _node_ip(self) -> str:
        first = self.r.choice(["10.0", "10.1", "192.168", "172.20", "100.70"])
        return f"{first}.{self.r.randint(0, 255)}.{self.r.randint(1, 254)}"

    def host(self, ip: str) -> str:
        return f"ip-{ip.replace('.', '-')}.ec2.internal"

    def mixed(self, n: int) -> str:
        # Random base62 with both cases and a digit, like every real generated key.
        while True:
            v = self.s(ALNUM, n)
            if (
                any(c.isupper() for c in v)
                and any(c.islower() for c in v)
                and any(c.isdigit() for c in v)
            ):
                return v

    def secret(self, kind: str) -> tuple[str, str]:
        """(text to plant, the secret part that must not survive)."""
        b64 = lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")  # noqa: E731
        if kind == "jwt":
            payload = json.dumps(
                {"iss": "kubernetes/serviceaccount", "sub": self.s(LOWER_ALNUM, 12)}
            )
            v = f"eyJhbGciOiJSUzI1NiIsImtpZCI6Ij{self.mixed(10)}In0.{b64(payload.encode())}.{self.mixed(43)}"
            return v, v
        if kind == "github-token":
            v = self.r.choice(["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) + self.mixed(36)
            return v, v
        if kind == "aws-access-key-id":
            v = "AKIA" + self.s(string.ascii_uppercase + string.digits, 16)
            return v, v
        if kind == "aws-secret-access-key":
            v = self.s(ALNUM + "/+", 40)
            kid = "AKIA" + self.s(string.ascii_uppercase + "234567", 16)
            self.corpus.secrets.append(("aws-access-key-id", kid))
            return f"aws_access_key_id={kid} aws_secret_access_key={v}", v
        if kind == "huggingface-token":
            v = "hf_" + self.mixed(34)
            return v, v
        if kind == "openai-key":
            v = "sk-proj-" + self.mixed(48)
            return v, v
        if kind == "ngc-key":
            v = "nvapi-" + self.mixed(64)
            return v, v
        if kind == "slack-webhook":
            v = f"T{self.s(string.ascii_uppercase + string.digits, 8)}/B{self.s(string.ascii_uppercase + string.digits, 10)}/{self.mixed(24)}"
            return f"https://hooks.slack.com/services/{v}", v
        if kind == "kubeadm-token":
            v = f"{self.s(LOWER_ALNUM, 5)}{self.r.choice(string.digits)}.{self.s(LOWER_ALNUM, 16)}"
            return f"kubeadm join 10.0.0.1:6443 --token {v}", v
        if kind == "private-key":
            body = "\n".join(self.s(ALNUM + "+/", 64) for _ in range(6))
            v = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
            return v, body.split("\n")[2]
        if kind == "private-key-base64":
            body = "\n".join(self.s(ALNUM + "+/", 64) for _ in range(4))
            pem = f"-----BEGIN EC PRIVATE KEY-----\n{body}\n-----END EC PRIVATE KEY-----\n"
            v = base64.b64encode(pem.encode()).decode()
            return v, v
        if kind == "bearer-token":
            v = self.mixed(40)
            return f"Authorization: Bearer {v}", v
        if kind == "url-password":
            v = self.mixed(14)
            return f"postgres://tf:{v}@greptimedb-standalone.greptimedb.svc:4003/public", v
        if kind == "password":
            v = self.mixed(12) + "!#"
            return f"password={v}", v
        if kind == "api-key":
            v = self.mixed(32)
            return f"x-api-key: {v}", v
        if kind == "docker-auth":
            v = base64.b64encode(f"robot:{self.mixed(20)}".encode()).decode()
            return f'{{"auths":{{"registry.example.com":{{"auth":"{v}"}}}}}}', v
        raise ValueError(kind)

    def plant(self, kind: str) -> str:
        text, original = self.secret(kind)
        self.corpus.secrets.append((kind, original))
        return text

    # ------------------------------------------------------------------ files
    def klog(self, n: int) -> str:
        lines = []
        for i in range(n):
            node = self.r.choice(self.nodes)
            ts = f"{self.r.randint(1, 12):02d}{self.r.randint(1, 28):02d} {self.r.randint(0, 23):02d}:{self.r.randint(0, 59):02d}:{self.r.randint(0, 59):02d}.{self.r.randint(0, 999999):06d}"
            pick = self.r.random()
            if pick < 0.4:
                lines.append(
                    f'I{ts}       1 gpunode_controller.go:{self.r.randint(50, 400)}] "Reconciling GPUNode" '
                    f'controller="gpunode" GPUNode="{self.host(node)}" reconcileID="{self._uuid()}" '
                    f'availableTFlops="{self.r.randint(0, 300)}" availableVRAM="{self.r.randint(1, 80)}Gi"'
                )
            elif pick < 0.7:
                lines.append(
                    f'I{ts}       1 pod_webhook.go:{self.r.randint(50, 400)}] "Mutating pod" '
                    f'pod="ml/llm-inference-{self.s(LOWER_ALNUM, 9)}-{self.s(LOWER_ALNUM, 5)}" '
                    f'podIP="{self.r.choice(self.pod_ips)}" gpu="gpu-{self.r.choice(self.gpu_uuids)}" '
                    f'image="tensorfusion/tensor-fusion-worker:1.35.{self.r.randint(0, 9)}"'
                )
            elif pick < 0.85:
                lines.append(
                    f'E{ts}       1 controller.go:{self.r.randint(50, 400)}] "Reconciler error" '
                    f'err="failed to get token: dial tcp {self.r.choice(self.pod_ips)}:443: connect: connection refused" '
                    f'controller="tensorfusioncluster" namespace="" name="tensor-fusion" '
                    f'version="2.17.{self.r.randint(0, 9)}.{self.r.randint(0, 99)}"'
                )
            else:
                lines.append(
                    f"W{ts}       1 reflector.go:{self.r.randint(50, 400)}] token expired, refreshing; "
                    f'password field is empty for user "root"; listen tcp :8001; '
                    f"driver 535.104.05 cuda 12.2 kernel 5.10.228-219.884.amzn2.x86_64"
                )
            if i % 400 == 7:
                lines.append(
                    f"I{ts}       1 config.go:88] loaded {self.plant(self.r.choice(_INLINE_KINDS))}"
                )
        return "\n".join(lines) + "\n"

    def jsonl(self, n: int) -> str:
        lines = []
        for i in range(n):
            rec = {
                "level": self.r.choice(["info", "debug", "warn"]),
                "ts": f"2025-03-01T09:{self.r.randint(0, 59):02d}:{self.r.randint(0, 59):02d}.{self.r.randint(0, 999):03d}Z",
                "logger": "hypervisor.device",
                "msg": self.r.choice(["gpu metrics", "worker connected", "shm mapped"]),
                "gpu_uuid": f"GPU-{self.r.choice(self.gpu_uuids)}",
                "node": self.host(self.r.choice(self.nodes)),
                "worker": f"{self.r.choice(self.pod_ips)}:{self.r.randint(8000, 8100)}",
                "tflops": round(self.r.random() * 300, 2),
                "vram_bytes": self.r.randint(0, 80) * 2**30,
            }
            if i % 300 == 5:
                kind = self.r.choice(
                    ["password", "api-key", "jwt", "github-token", "huggingface-token"]
                )
                _, original = self.secret(kind)
                self.corpus.secrets.append((kind, original))
                rec[{"password": "db_password", "api-key": "api_key"}.get(kind, "token")] = original
            lines.append(json.dumps(rec, separators=(",", ":")))
        return "\n".join(lines) + "\n"

    def pod(self, i: int) -> dict:
        node = self.r.choice(self.nodes)
        digest = "sha256:" + self.s(HEX, 64)
        env = [
            {"name": "TF_CUDA_LIB_PATH", "value": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
            {"name": "TF_ENABLE_LOG", "value": "1"},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": f"GPU-{self.r.choice(self.gpu_uuids)}"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ]
        if i % 20 == 3:
            for kind, name in (("license", "TF_LICENSE"), ("license", "TF_LICENSE_SIGN")):
                v = self.mixed(48)
                self.corpus.secrets.append((kind, v))
                env.append({"name": name, "value": v})
        if i % 30 == 4:
            v = self.mixed(16)
            self.corpus.secrets.append(("password", v))
            env.append({"name": "TSDB_MYSQL_PASSWORD", "value": v})
        self.corpus.keep.append(digest)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"hypervisor-{self.host(node)}",
                "namespace": "tensor-fusion-sys",
                "uid": self._uuid(),
                "labels": {
                    "tensor-fusion.ai/component": "hypervisor",
                    "tensor-fusion.ai/gpupool": "tensor-fusion-shared",
                },
                "annotations": {"tensor-fusion.ai/gpu-ids": f"gpu-{self.r.choice(self.gpu_uuids)}"},
            },
            "spec": {
                "nodeName": self.host(node),
                "nodeSelector": {"kubernetes.io/hostname": self.host(node)},
                "containers": [
                    {
                        "name": "hypervisor",
                        "image": "tensorfusion/tensor-fusion-hypervisor:2.15.0",
                        "args": ["--port=8000", "--log-level=info"]
                        + ([f"--token={self.plant('jwt')}"] if i % 25 == 2 else []),
                        "env": env,
                        "resources": {
                            "limits": {"cpu": "2", "memory": "4Gi"},
                            "requests": {"cpu": "100m"},
                        },
                        "ports": [{"containerPort": 8000, "protocol": "TCP"}],
                    }
                ],
                "tolerations": [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                ],
            },
            "status": {
                "phase": "Running",
                "hostIP": node,
                "podIP": self.r.choice(self.pod_ips),
                "podIPs": [{"ip": self.r.choice(self.pod_ips)}],
                "startTime": "2025-03-01T08:00:00Z",
                "containerStatuses": [
                    {
                        "name": "hypervisor",
                        "containerID": "containerd://" + self.s(HEX, 64),
                        "image": "tensorfusion/tensor-fusion-hypervisor:2.15.0",
                        "imageID": f"docker.io/tensorfusion/tensor-fusion-hypervisor@{digest}",
                        "ready": True,
                        "restartCount": self.r.randint(0, 3),
                    }
                ],
            },
        }

    def node(self, ip: str) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.host(ip),
                "uid": self._uuid(),
                "labels": {
                    "kubernetes.io/hostname": self.host(ip),
                    "node.kubernetes.io/instance-type": "p4d.24xlarge",
                    "nvidia.com/gpu.present": "true",
                },
                "annotations": {
                    "alpha.kubernetes.io/provided-node-ip": ip,
                    "node.alpha.kubernetes.io/ttl": "0",
                },
            },
            "spec": {
                "podCIDR": f"10.244.{self.r.randint(0, 63)}.0/24",
                "providerID": "aws:///us-west-2a/i-0abc",
            },
            "status": {
                "addresses": [
                    {"type": "InternalIP", "address": ip},
                    {"type": "InternalDNS", "address": self.host(ip)},
                    {"type": "Hostname", "address": self.host(ip)},
                ],
                "allocatable": {
                    "cpu": "95",
                    "memory": "1176433344Ki",
                    "tensor-fusion.ai/index_0": "36",
                },
                "nodeInfo": {
                    "kernelVersion": "5.10.228-219.884.amzn2.x86_64",
                    "kubeletVersion": "v1.30.4-eks-a737599",
                    "containerRuntimeVersion": "containerd://1.7.22",
                    "osImage": "Amazon Linux 2",
                },
            },
        }

    def helm_values(self) -> str:
        pw, tok, key = self.mixed(18), self.mixed(32), self.mixed(40)
        self.corpus.secrets.extend([("password", pw), ("token", tok), ("api-key", key)])
        return (
            "controller:\n  image:\n    repository: tensorfusion/tensor-fusion-operator\n"
            '    tag: "1.35.2"\n  admissionWebhooks:\n    secretName: tensor-fusion-webhook-secret\n'
            f"greptime:\n  isCloud: true\n  host: greptimedb-standalone.greptimedb.svc.cluster.local\n"
            f"  port: 4002\n  user: admin\n  password: {pw}\n"
            f'agent:\n  enrollToken: "{tok}"\n  cloudEndpoint: wss://app.tensor-fusion.ai\n'
            f"cloudVendorCredentials:\n  accessKey: AKIA{self.s(string.ascii_uppercase, 16)}\n  secretKey: {key}\n"
            "initialGpuNodeLabelSelector: nvidia.com/gpu.present=true\n"
        )


_INLINE_KINDS = (
    "jwt",
    "github-token",
    "aws-access-key-id",
    "aws-secret-access-key",
    "huggingface-token",
    "openai-key",
    "ngc-key",
    "slack-webhook",
    "kubeadm-token",
    "private-key",
    "private-key-base64",
    "bearer-token",
    "url-password",
    "password",
    "api-key",
    "docker-auth",
)


def _add_files(gen: _Gen, corpus: Corpus, i: int) -> None:
    which = i % 4
    if which == 0:
        corpus.files[f"logs/tensor-fusion-sys/controller-{i}/controller.log"] = gen.klog(3000)
    elif which == 1:
        corpus.files[f"logs/tensor-fusion-sys/hypervisor-{i}/hypervisor.log"] = gen.jsonl(2500)
    elif which == 2:
        items = [gen.pod(j) for j in range(150)]
        corpus.files[f"objects/pods/ns-{i}.json"] = json.dumps(
            {"kind": "PodList", "items": items}, indent=1, sort_keys=True
        )
    else:
        items = [gen.node(ip) for ip in gen.nodes]
        corpus.files[f"objects/nodes/_cluster-{i}.json"] = json.dumps(
            {"kind": "NodeList", "items": items}, indent=1, sort_keys=True
        )
        corpus.files[f"helm/values-{i}.yaml"] = gen.helm_values()


def build_corpus(target_bytes: int, seed: int = 7) -> Corpus:
    gen = _Gen(seed)
    corpus = gen.corpus
    # Every kind at least once, whatever the size.
    corpus.files["logs/planted.log"] = (
        "\n".join(f"msg={gen.plant(k)} end" for k in _INLINE_KINDS) + "\n"
    )
    corpus.planted_in["logs/planted.log"] = (0, len(corpus.secrets))
    i = 0
    while corpus.size < target_bytes or i < 4:  # every file type at least once
        before, names = len(corpus.secrets), set(corpus.files)
        _add_files(gen, corpus, i)
        for name in set(corpus.files) - names:
            corpus.planted_in[name] = (before, len(corpus.secrets))
        i += 1
    corpus.keep.extend(
        [
            "5.10.228-219.884.amzn2.x86_64",
            "tensorfusion/tensor-fusion-worker:1.35.",
            "token expired",
            "password field is empty",
            "tensor-fusion-webhook-secret",
            "nvidia.com/gpu.present=true",
            "535.104.05",
        ]
    )
    return corpus


@dataclass
class Result:
    mb: float
    seconds: float
    recall: float
    missed: list[tuple[str, str]]
    kept: int
    keep_total: int
    address_recall: float

    @property
    def mb_per_s(self) -> float:
        return self.mb / self.seconds if self.seconds else float("inf")


def run(corpus: Corpus, *, workers: int = 1, key: bytes = b"bench-key-0123456789abcdef") -> Result:
    items = list(corpus.files.items())
    redactor = Redactor(key=key)
    t0 = time.perf_counter()
    outputs = redact_members(redactor, items, redact_text_member, workers=workers)
    seconds = time.perf_counter() - t0
    return score(corpus, dict(zip((name for name, _ in items), outputs, strict=True)), seconds)


def score(corpus: Corpus, by_name: dict[str, str], seconds: float) -> Result:
    """What a tool's output (file name -> text) kept of the planted secrets and addresses."""
    joined = "\n".join(by_name.values())
    missed = [
        corpus.secrets[j]
        for name, (a, b) in corpus.planted_in.items()
        for j in range(a, b)
        if corpus.secrets[j][1] in by_name[name]
    ]
    leaked_addresses = _leaked_addresses(joined, corpus.addresses)
    # A sample of the must-stay values (each check scans the whole output).
    keep = sorted(set(corpus.keep))
    keep = keep if len(keep) <= 300 else random.Random(1).sample(keep, 300)
    kept = sum(1 for v in keep if v in joined)
    total = len(corpus.secrets)
    return Result(
        mb=corpus.size / 1e6,
        seconds=seconds,
        recall=(total - len(missed)) / total if total else 1.0,
        missed=missed,
        kept=kept,
        keep_total=len(keep),
        address_recall=1 - len(leaked_addresses) / len(corpus.addresses),
    )


def _leaked_addresses(text: str, addresses: list[str]) -> list[str]:
    dotted = set(re.findall(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", text))
    dashed = set(re.findall(r"ip-([0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3})", text))
    return [a for a in addresses if a in dotted or a.replace(".", "-") in dashed]


# ---------------------------------------------------------------------------- recall by syntax
# Every syntax a sensitive name can assign a value in: {k} snake_case, {K} UPPER_SNAKE,
# {kd} kebab-case name, {v} the value. The value's span is where {v} stands.
SYNTAXES: dict[str, str] = {
    "env": "{K}={v}",
    "logfmt": "level=info msg=start {k}={v} user=bob",
    "json": '{{"{k}": "{v}", "n": 1}}',
    "json-tight": '{{"{k}":"{v}"}}',
    "json-escaped": '"{{\\"{k}\\":\\"{v}\\"}}"',
    "json-header-array": '{{"headers":{{"Accept":["*/*"],"{kd}":["{v}"]}}}}',
    "yaml": "config:\n  {k}: {v}\n  other: 1\n",
    "yaml-quoted": 'config:\n  {k}: "{v}"\n',
    "yaml-list": "- {k}: {v}\n",
    "yaml-env": "- name: {K}\n  value: {v}\n",
    "json-env": '{{"name": "{K}", "value": "{v}"}}',
    "flag-eq": "/bin/agent --{kd}={v} --verbose",
    "flag-space": "/bin/agent --{kd} {v} --verbose",
    "yaml-args": "args:\n- --{kd}\n- {v}\n",
    "json-args": 'args: ["serve", "--{kd}", "{v}"]',
    "go-walrus": '\t{k} := "{v}"',
    "go-var": 'var {k} string = "{v}"',
    "go-backtick": "\t{k} := `{v}`",
    "makefile": "{K} := {v}",
    "makefile-double-colon": "{K} ::= {v}",
    "makefile-conditional": "{K} ?= {v}",
    "php-concat": "${k} .= '{v}';",
    "php-arrow": "    '{k}' => '{v}',",
    "ruby-arrow": '  :{k} => "{v}",',
    "call": 'System.setProperty("{K}", "{v}");',
    "go-setenv": 'os.Setenv("{K}", "{v}")',
    "subscript": 'os.environ["{K}"] = "{v}"',
    "kwarg": 'connect(host=h, {k}="{v}")',
    "toml": '{k} = "{v}"',
    "xml-element": "  <{k}>{v}</{k}>",
    "xml-attribute": '<add key="{K}" value="{v}" />',
    "log-prefix": '2025-03-01T09:10:05Z INFO refreshed, {k}: "{v}"',
    "go-map": "map[{k}:{v} user:x]",
    "go-struct": "&{{User:admin {K}:{v}}}",
    "url-query": "https://example.com/cb?x=1&{k}={v}&next=/",
    # Command lines: the value is a password by its place, whatever it is named.
    "mysql-glued": "mysql -h db -uroot -p{v} tensorfusion",
    "redis-cli": "redis-cli -h redis-master -a {v} ping",
    "curl-user": "curl -u admin:{v} https://registry.example.com/v2/",
    "stdin-echo": "echo '{v}' | docker login -u ci --password-stdin registry.example.com",
    "stdin-here-string": 'docker login -u ci --password-stdin <<< "{v}"',
    "config-set": "aws configure set --profile prod {k} {v}",
}
POSITIONAL = frozenset(("mysql-glued", "redis-cli", "curl-user", "stdin-echo", "stdin-here-string"))
# Sensitive names in their three spellings (snake, UPPER, kebab).
NAMES = (
    ("password", "DB_PASSWORD", "password"),
    ("api_key", "API_KEY", "x-api-key"),
    ("auth_token", "AUTH_TOKEN", "auth-token"),
    ("client_secret", "CLIENT_SECRET", "client-secret"),
)
NEUTRAL = ("setting", "SETTING", "setting")  # says nothing: only the value's shape can tell


def plant(syntax: str, value: str, names: tuple[str, str, str]) -> tuple[str, int, int]:
    """(text, start, end of the value in it)."""
    k, big, kd = names
    template = SYNTAXES[syntax]
    before, _, _ = template.partition("{v}")
    head = before.format(k=k, K=big, kd=kd)
    text = template.format(k=k, K=big, kd=kd, v=value)
    return text, len(head), len(head) + len(value)


@dataclass
class Tally:
    found: dict[str, list[int]] = field(default_factory=dict)  # label -> [found, total]
    missed: list[str] = field(default_factory=list)

    def add(self, label: str, ok: bool, what: str) -> None:
        cell = self.found.setdefault(label, [0, 0])
        cell[0] += ok
        cell[1] += 1
        if not ok:
            self.missed.append(f"{label}: {what}")

    @property
    def rate(self) -> float:
        found = sum(f for f, _ in self.found.values())
        total = sum(t for _, t in self.found.values())
        return found / total if total else 1.0


def _redacted(redactor: Redactor, text: str, start: int, end: int) -> bool:
    """The value is gone and nothing outside its span changed but for a placeholder in it."""
    out = redactor.redact_text(text)
    head, tail = text[:start], text[end:]
    return (
        out.startswith(head)
        and out.endswith(tail)
        and PLACEHOLDER.fullmatch(out[len(head) : len(out) - len(tail)]) is not None
    )


def nest(text: str, start: int, end: int, depth: int) -> tuple[str, int, int]:
    """`text` as a JSON log line's message `depth` times over (each level escapes the one
    inside), and where the secret's bytes are written then."""
    for _ in range(depth):
        head = '{"level":"info","msg":"'
        escaped = [json.dumps(part)[1:-1] for part in (text[:start], text[start:end], text[end:])]
        start = len(head) + len(escaped[0])
        end = start + len(escaped[1])
        text = head + "".join(escaped) + '"}'
    return text, start, end


DEPTHS = range(4)  # how many times a line is logged inside another JSON line


@dataclass
class Recall:
    by_kind: Tally  # catalogue examples under a neutral name, every syntax and depth
    by_source: Tally  # the same, per public rule set holding the format, or its page
    by_syntax: Tally  # generated values under sensitive names, every syntax and depth
    by_depth: Tally  # both, per depth of JSON string escaping


def format_sources(fmt: TokenFormat) -> list[str]:
    """The public rule sets that hold a format, and "platform page" where its row cites one
    that states the shape (docs/token-formats.md)."""
    sets = sorted({rule.split(":", 1)[0] for rule in fmt.rule_sets})
    return sets + ([] if fmt.from_rule_set else ["platform page"])


def syntax_recall(key: bytes = b"bench-key-0123456789abcdef") -> Recall:
    redactor = Redactor(key=key)
    recall = Recall(Tally(), Tally(), Tally(), Tally())
    gen = random.Random(11)
    generated = {(syntax, names): _generated_value(gen) for syntax in SYNTAXES for names in NAMES}
    for depth in DEPTHS:
        for fmt in FORMATS:
            if not fmt.standalone:
                continue
            for example in fmt.examples:
                for syntax in SYNTAXES:
                    text, start, end = plant(syntax, example, NEUTRAL)
                    if fmt is PEM:  # a header alone is not a key: the body must follow
                        text = text[:end] + "\nMIIEfakeBODY0123456789\n-----END PRIVATE KEY-----"
                        text, _, _ = nest(text, start, end, depth)
                        ok = "MIIEfakeBODY" not in redactor.redact_text(text)
                    else:
                        if fmt.head and syntax not in POSITIONAL:
                            # A webhook's fixed path stays: the rest is the secret (on a
                            # command line, the whole argument is the password).
                            start += re.match(re.escape(fmt.prefix) + fmt.head, example).end()
                        ok = _redacted(redactor, *nest(text, start, end, depth))
                    what = f"{syntax} depth {depth} {example[:40]}"
                    recall.by_kind.add(fmt.kind, ok, what)
                    for source in format_sources(fmt):
                        recall.by_source.add(source, ok, what)
                    recall.by_depth.add(f"depth {depth}", ok, f"{syntax} {example[:40]}")
        for (syntax, names), value in generated.items():
            text, start, end = plant(syntax, value, names)
            ok = _redacted(redactor, *nest(text, start, end, depth))
            recall.by_syntax.add(syntax, ok, f"depth {depth} {text[:70]}")
            recall.by_depth.add(f"depth {depth}", ok, text[:70])
    return recall


def _generated_value(gen: random.Random) -> str:
    body = "".join(gen.choice(ALNUM + "!#%*+~._") for _ in range(gen.randint(8, 24)))
    return "Q" + body + "z7"  # a generated secret: capitals, lower case and a digit


# ---------------------------------------------------------------------------- held-out corpus
HELDOUT = Path(__file__).with_name("redact_heldout.txt")
_MARKED = re.compile("«([^»]*)»")


@dataclass(frozen=True)
class Case:
    syntax: str
    kind: str  # "keep" for a case that holds no secret
    text: str  # marks removed
    spans: tuple[tuple[int, int], ...]


def heldout_cases(path: Path = HELDOUT) -> list[Case]:
    cases: list[Case] = []
    header: list[str] | None = None
    body: list[str] = []

    def close() -> None:
        if header is None:
            return
        marked = "\n".join(body) + "\n"
        spans, text, pos = [], [], 0
        for m in _MARKED.finditer(marked):
            text.append(marked[pos : m.start()])
            start = sum(map(len, text))
            text.append(m.group(1))
            spans.append((start, start + len(m.group(1))))
            pos = m.end()
        text.append(marked[pos:])
        kind, syntax = (header[0], header[1]) if header[0] == "keep" else (header[1], header[0])
        cases.append(Case(syntax, kind, "".join(text), tuple(spans)))

    for line in path.read_text("utf-8").splitlines():
        if line.startswith("==="):
            close()
            header, body = line[3:].split(), []
        elif header is not None:
            body.append(line)
    close()
    return cases


def heldout_recall(key: bytes = b"bench-key-0123456789abcdef") -> tuple[Tally, Tally]:
    """(secrets found per syntax, keep cases byte-identical)."""
    redactor = Redactor(key=key)
    found, kept = Tally(), Tally()
    for case in heldout_cases():
        out = redactor.redact_text(case.text)
        if case.kind == "keep":
            kept.add(case.syntax, out == case.text, case.text.strip()[:70])
            continue
        gone = all(case.text[a:b] not in out for a, b in case.spans)
        found.add(case.syntax, gone, case.text.strip()[:70])
    return found, kept


def near_miss_precision(key: bytes = b"bench-key-0123456789abcdef") -> Tally:
    redactor = Redactor(key=key)
    tally = Tally()
    for fmt in FORMATS:
        for near in fmt.near_misses:
            text = f"saw {near} in the file"
            tally.add(fmt.kind, redactor.redact_text(text) == text, near)
    return tally


# ---------------------------------------------------------------------------- the CLI
def write_files(corpus: Corpus, root: Path) -> None:
    for name, text in corpus.files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def read_files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text("utf-8", errors="replace")
        for p in root.rglob("*")
        if p.is_file()
    }


def cli_run(src: Path, out: Path, workers: int) -> float:
    """Seconds of `tf-collect redact SRC -o OUT --workers N`, start-up included."""
    exe = shutil.which("tf-collect", path=str(Path(sys.executable).parent)) or shutil.which(
        "tf-collect"
    )
    command = [exe] if exe else [sys.executable, "-c", "from collector.entry import main; main()"]
    t0 = time.perf_counter()
    subprocess.run(
        [*command, "redact", str(src), "-o", str(out), "--workers", str(workers)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t0


def sos_run(src: Path, tmp: Path, sos: str, workers: int) -> tuple[float, Path]:
    """(seconds, output directory) of `sos clean` on a copy of SRC (sos clean takes the
    directory it cleans away, so each run gets its own copy; copying is not timed)."""
    work, out = tmp / "sos-in", tmp / "sos-out"
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, work)
    out.mkdir()
    t0 = time.perf_counter()
    subprocess.run(
        [sos, "clean", str(work), "--batch", "--tmp-dir", str(out), "--jobs", str(workers)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t0, out / work.name


@dataclass
class SideBySide:
    tf_collect: Result
    sos_clean: Result | None


def side_by_side(corpus: Corpus, *, workers: int, runs: int, sos: str | None) -> SideBySide:
    """`tf-collect redact` and `sos clean` on the same files with the same number of
    processes, each the best of `runs`, run in turn so both see the same machine; each
    scored on what its output kept."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        src = tmp / "bundle"
        write_files(corpus, src)
        cli_best = sos_best = float("inf")
        cli_out = sos_out = None
        for i in range(runs):
            cli_out = tmp / f"tf-collect-{i}"
            cli_best = min(cli_best, cli_run(src, cli_out, workers))
            if sos is not None:
                seconds, sos_out = sos_run(src, tmp, sos, workers)
                sos_best = min(sos_best, seconds)
        assert cli_out is not None
        tf = score(corpus, read_files(cli_out), cli_best)
        other = score(corpus, read_files(sos_out), sos_best) if sos_out is not None else None
        return SideBySide(tf, other)


def _print_tool(name: str, result: Result, args: argparse.Namespace) -> None:
    print(
        f"{name}: {result.mb:.1f} MB in {result.seconds:.2f}s = {result.mb_per_s:.1f} MB/s "
        f"(best of {args.runs}, {args.workers} processes, start-up included); secrets "
        f"{result.recall:.1%} gone, internal addresses {result.address_recall:.1%} gone"
    )


def _print_tally(title: str, tally: Tally, *, misses: int = 8) -> None:
    total = sum(t for _, t in tally.found.values())
    print(f"{title}: {tally.rate:.1%} of {total}")
    cells = [f"{label} {f}/{t}" for label, (f, t) in sorted(tally.found.items())]
    for i in range(0, len(cells), 6):
        print("   " + ", ".join(cells[i : i + 6]))
    for what in tally.missed[:misses]:
        print(f"   MISSED {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=52.0, help="corpus size in MB (default 52)")
    ap.add_argument(
        "--workers",
        type=int,
        default=default_workers(),
        help=f"processes (default: the cores, at most 4: {default_workers()} here)",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--runs", type=int, default=3, help="the CLI and sos clean: best of N runs (default 3)"
    )
    ap.add_argument(
        "--sos",
        default=shutil.which("sos"),
        help="the sos command, to run `sos clean` side by side (default: sos on PATH; "
        "install it from its source release: pip install "
        "https://github.com/sosreport/sos/archive/refs/tags/4.12.0.tar.gz)",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    corpus = build_corpus(int(args.mb * 1e6), seed=args.seed)
    print(
        f"corpus: {corpus.size / 1e6:.1f} MB in {len(corpus.files)} files, "
        f"{len(corpus.secrets)} planted secrets, {len(corpus.addresses)} internal addresses "
        f"(built in {time.perf_counter() - t0:.1f}s)"
    )
    if args.workers > 1:
        serial = run(corpus, workers=1)
        print(
            f"redacted: {serial.mb:.1f} MB in {serial.seconds:.2f}s = {serial.mb_per_s:.1f} MB/s (workers=1)"
        )
    result = run(corpus, workers=args.workers)
    print(
        f"redacted: {result.mb:.1f} MB in {result.seconds:.2f}s = {result.mb_per_s:.1f} MB/s "
        f"(workers={args.workers}, pool start included)"
    )
    print(
        f"recall: secrets {result.recall:.2%} ({len(corpus.secrets) - len(result.missed)}/"
        f"{len(corpus.secrets)}), addresses {result.address_recall:.2%}"
    )
    print(f"precision: {result.kept}/{result.keep_total} must-stay values unchanged")
    for kind, value in result.missed[:10]:
        print(f"  MISSED {kind}: {value[:60]}")
    both = side_by_side(corpus, workers=args.workers, runs=args.runs, sos=args.sos)
    _print_tool("tf-collect redact", both.tf_collect, args)
    if both.sos_clean is None:
        print("sos clean: not installed (see --sos)")
    else:
        _print_tool("sos clean", both.sos_clean, args)
        ratio = both.tf_collect.mb_per_s / both.sos_clean.mb_per_s
        print(f"tf-collect redact / sos clean: {ratio:.1f}x the speed, same files and processes")
    recall = syntax_recall()
    _print_tally(
        "recall per kind (catalogue examples x every syntax x depths 0-3, neutral name)",
        recall.by_kind,
    )
    _print_tally(
        "recall per format source (the same cases, per rule set holding the format)",
        recall.by_source,
    )
    _print_tally(
        "recall per syntax (generated values under sensitive names, depths 0-3)", recall.by_syntax
    )
    _print_tally("recall per depth of JSON string escaping (both sets above)", recall.by_depth)
    found, kept = heldout_recall()
    _print_tally("held-out corpus, recall per syntax", found, misses=20)
    _print_tally("held-out corpus, near misses kept byte-identical", kept, misses=20)
    _print_tally("catalogue near misses kept byte-identical", near_miss_precision())
    import public_values  # beside this file: public values a bundle holds, in every syntax

    kept, total, per_class = public_values.precision()
    print(f"public values kept byte-identical: {kept / total:.1%} ({kept} of {total})")
    cells = [f"{label} {k}/{t}" for label, (k, t) in sorted(per_class.items())]
    print("   " + ", ".join(cells))


if __name__ == "__main__":
    main()
