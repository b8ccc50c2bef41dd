#!/usr/bin/env python3
"""Public values a support bundle holds, which redaction must leave byte-identical:

    python bench/public_values.py

Each value is written under the name the tool that prints it uses, in every syntax a bundle
holds it in: a log line, YAML, JSON, an env var, a command-line flag, and inside a JSON string
escaped once (a `last-applied-configuration` annotation, a docker json-file log line) and twice
(that annotation inside a forwarded log record). Values are random from a fixed seed; names and
surroundings are the tools' own (each cited where it is defined). A case is kept when the text
path (`Redactor.redact_text`) and, for a document, the structured path (`tf-collect redact` of a
`.json`/`.yaml` member) both return it unchanged. No case holds an address, which the engine
pseudonymises on purpose.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.bundle import dump_json
from collector.redact import Redactor

# The member path of `tf-collect redact DIR`: a bundle's .json by structure, a .yaml in place.
from collector.redact.offline import redact_member

SEED = 29
REPEATS = 6  # random values per field and syntax
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

Value = Callable[[random.Random], Any]


def _hex(n: int) -> Value:
    return lambda r: "".join(r.choice("0123456789abcdef") for _ in range(n))


def _uuid(r: random.Random) -> str:
    h = _hex(32)(r)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def _sha256(r: random.Random) -> str:
    return "sha256:" + _hex(64)(r)


def _one_of(*values: Any) -> Value:
    return lambda r: r.choice(values)


def _any(*values: Value) -> Value:
    return lambda r: r.choice(values)(r)


def _fmt(template: str, **parts: Value) -> Value:
    return lambda r: template.format(**{k: v(r) for k, v in parts.items()})


def _digits(lo: int, hi: int) -> Value:
    return lambda r: str(r.randint(lo, hi))


# Kubernetes' rand.SafeEncodeString alphabet (no vowels, no 0/1/3): pod-template-hash and
# controller-revision-hash are written in it (k8s.io/apimachinery/pkg/util/rand).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def _safe(n: int) -> Value:
    return lambda r: "".join(r.choice(_SAFE) for _ in range(n))


_REPOS = _one_of(
    "docker.io/tensorfusion/tensor-fusion-operator",
    "docker.io/tensorfusion/tensor-fusion-hypervisor",
    "nvcr.io/nvidia/k8s-device-plugin",
    "ghcr.io/nvidia/gpu-operator",
    "registry.k8s.io/kube-proxy",
    "docker.io/library/busybox",
)
_SEMVER = _fmt("{a}.{b}.{c}", a=_digits(0, 3), b=_digits(0, 60), c=_digits(0, 30))
_DRIVER = _fmt(
    "{a}.{b}.{c}", a=_digits(470, 575), b=_digits(10, 199), c=_one_of("01", "02", "03", "05", "15")
)
_NODE = _any(
    # GKE: gke-<cluster>-<pool>-<8 hex>-<4>; AKS: aks-<pool>-<8 digits>-vmss<6>; a bare name.
    _fmt("gke-prod-gpu-pool-{h}-{s}", h=_hex(8), s=_safe(4)),
    _fmt(
        "aks-gpunp-{d}-vmss{v}", d=_digits(10000000, 99999999), v=_fmt("00000{n}", n=_digits(0, 9))
    ),
    _fmt("gpu-node-{n}", n=_digits(1, 64)),
)


@dataclass(frozen=True)
class Field:
    """A value under a name in an object, written in each of `syntaxes`."""

    cls: str
    path: tuple[str, ...]  # parents, then the value's own name
    value: Value
    syntaxes: tuple[str, ...]


@dataclass(frozen=True)
class Line:
    """A line (or lines) a tool prints, written as a log holds it and inside JSON strings."""

    cls: str
    text: Value


@dataclass(frozen=True)
class Case:
    cls: str
    syntax: str
    text: str
    member: tuple[str, bytes] | None = None  # a document, as `tf-collect redact` reads it


OBJECT = ("yaml", "json", "escaped-1", "escaped-2")
SCALAR = ("log", "env", "flag", *OBJECT)

FIELDS: tuple[Field, ...] = (
    # --- kubeadm: "--discovery-token-ca-cert-hash ... sha256:<hex>": the hash of the CA's
    # public key (SubjectPublicKeyInfo), public by design (kubeadm join reference, "Discovery
    # token CA cert hash"); JoinConfiguration `discovery.bootstrapToken.caCertHashes`
    # (kubeadm config v1beta3/v1beta4; top-level `discoveryTokenCACertHashes` in v1alpha2).
    # Scripts pass the flag's value in an env var.
    Field("kubeadm-hash", ("discovery-token-ca-cert-hash",), _sha256, ("flag", "env", "log")),
    Field(
        "kubeadm-hash",
        ("discovery", "bootstrapToken", "caCertHashes"),
        lambda r: [_sha256(r)],
        OBJECT,
    ),
    Field("kubeadm-hash", ("discoveryTokenCACertHashes",), lambda r: [_sha256(r)], OBJECT),
    # --- image digests: `image: repo@sha256:...` (OCI distribution spec), kubelet's
    # `status.containerStatuses[].imageID` (docker-pullable:// under dockershim, the repo
    # digest under containerd), `containerID: containerd://<64 hex>`, the image id
    # `sha256:<64 hex>` (crictl inspecti, docker image inspect's `Id`), an OCI descriptor's
    # `digest`.
    Field("digest", ("spec", "image"), _fmt("{r}@{d}", r=_REPOS, d=_sha256), SCALAR),
    Field(
        "digest",
        ("status", "imageID"),
        _fmt("docker-pullable://{r}@{d}", r=_REPOS, d=_sha256),
        OBJECT,
    ),
    Field("digest", ("status", "imageID"), _fmt("{r}@{d}", r=_REPOS, d=_sha256), OBJECT),
    Field("digest", ("status", "containerID"), _fmt("containerd://{h}", h=_hex(64)), OBJECT),
    Field("digest", ("Id",), _sha256, ("log", "yaml", "json", "escaped-1", "escaped-2")),
    Field("digest", ("config", "digest"), _sha256, OBJECT),
    # --- commits: kubectl version -o yaml (`gitCommit`), go version -m (`vcs.revision`), the
    # short commit most tools print beside their version (`git rev-parse --short`, 7-12).
    Field("commit", ("serverVersion", "gitCommit"), _hex(40), OBJECT),
    Field("commit", ("vcs.revision",), _hex(40), ("log", "yaml", "json")),
    Field("commit", ("GIT_COMMIT",), _hex(40), ("env", "yaml", "json", "escaped-1")),
    Field("commit", ("commit",), lambda r: _hex(r.randint(7, 12))(r), SCALAR),
    Field("commit", ("revision",), _hex(40), SCALAR),
    # --- identifiers: metadata.uid and ownerReferences[].uid, resourceVersion, nvidia-smi's
    # GPU and MIG UUIDs as the device plugin passes them (NVIDIA_VISIBLE_DEVICES), W3C
    # trace context (`traceparent`: version-traceid-parentid-flags), OpenTelemetry log fields.
    Field("uid", ("metadata", "uid"), _uuid, OBJECT),
    Field("uid", ("metadata", "resourceVersion"), _digits(1000, 99999999), OBJECT),
    Field("uid", ("podUID",), _uuid, ("log", "json", "yaml")),
    Field(
        "uid",
        ("NVIDIA_VISIBLE_DEVICES",),
        _fmt("GPU-{u}", u=_uuid),
        ("env", "yaml", "json", "escaped-1", "escaped-2"),
    ),
    Field("uid", ("NVIDIA_VISIBLE_DEVICES",), _fmt("MIG-{u}", u=_uuid), ("env", "yaml", "json")),
    Field(
        "uid",
        ("traceparent",),
        _fmt("00-{t}-{s}-01", t=_hex(32), s=_hex(16)),
        ("log", "yaml", "json"),
    ),
    Field("uid", ("trace_id",), _hex(32), ("log", "json", "escaped-2")),
    Field("uid", ("span_id",), _hex(16), ("log", "json", "escaped-2")),
    # --- versions: kubectl version (`gitVersion`), nvidia-smi's driver and CUDA versions, a
    # Helm chart's appVersion, pre-releases (SemVer 2.0.0).
    Field(
        "version",
        ("serverVersion", "gitVersion"),
        _fmt("v1.{m}.{p}", m=_digits(24, 33), p=_digits(0, 12)),
        OBJECT,
    ),
    Field("version", ("driverVersion",), _DRIVER, SCALAR),
    Field("version", ("cudaVersion",), _fmt("12.{m}", m=_digits(0, 9)), SCALAR),
    Field("version", ("version",), _SEMVER, SCALAR),
    Field("version", ("appVersion",), _fmt("{v}-rc.{n}", v=_SEMVER, n=_digits(1, 9)), SCALAR),
    # --- quantities (resource.Quantity), and TensorFusion's own annotations.
    Field("quantity", ("resources", "limits", "memory"), _fmt("{n}Gi", n=_digits(1, 640)), OBJECT),
    Field("quantity", ("resources", "requests", "cpu"), _fmt("{n}m", n=_digits(100, 8000)), OBJECT),
    Field("quantity", ("resources", "limits", "nvidia.com/gpu"), _digits(1, 8), OBJECT),
    Field(
        "quantity",
        ("metadata", "annotations", "tensor-fusion.ai/tflops-limit"),
        _digits(10, 990),
        OBJECT,
    ),
    Field(
        "quantity",
        ("metadata", "annotations", "tensor-fusion.ai/vram-limit"),
        _fmt("{n}Gi", n=_digits(1, 80)),
        OBJECT,
    ),
    # --- checksums: Helm's "automatically roll deployments" annotation (`checksum/config:
    # {{ include ... | sha256sum }}`, Helm docs, Chart Development Tips); charts also hash
    # their Secret the same way (`checksum/secret`, e.g. Bitnami's charts): a digest of the
    # rendered manifest, not the secret. The ReplicaSet's `pod-template-hash` and the
    # DaemonSet/StatefulSet `controller-revision-hash` labels.
    Field("checksum", ("metadata", "annotations", "checksum/config"), _hex(64), OBJECT),
    Field("checksum", ("metadata", "annotations", "checksum/secret"), _hex(64), OBJECT),
    Field(
        "checksum",
        ("metadata", "labels", "pod-template-hash"),
        lambda r: _safe(r.randint(9, 10))(r),
        OBJECT,
    ),
    Field(
        "checksum",
        ("metadata", "labels", "controller-revision-hash"),
        lambda r: _safe(r.randint(9, 10))(r),
        OBJECT,
    ),
    # --- names: nodes (cloud providers' naming), CRDs, pods of a Deployment.
    Field("name", ("spec", "nodeName"), _NODE, SCALAR),
    Field(
        "name",
        ("metadata", "name"),
        _one_of(
            "gpupools.tensor-fusion.ai",
            "tensorfusionclusters.tensor-fusion.ai",
            "gpunodes.tensor-fusion.ai",
        ),
        OBJECT,
    ),
    Field(
        "name",
        ("metadata", "name"),
        _fmt("tensor-fusion-sys-controller-{a}-{b}", a=_safe(10), b=_safe(5)),
        OBJECT,
    ),
    # --- names that look sensitive and hold no secret: a reference to one (Kubernetes
    # `secretName`, `secretKeyRef`; TensorFusion's `tokenSecretRef`), a file that holds it
    # (`passwordFile`, kube-apiserver's `--kubelet-client-key` and `--kubelet-client-
    # certificate`, kubeconfig's `client-key`), a switch (mongod.conf's `security.
    # authorization: enabled`, `automountServiceAccountToken`), a duration (kubeadm token
    # create `--ttl`, `--token-ttl`), an LLM limit (`max_tokens`), and values already masked.
    Field(
        "near-name",
        ("spec", "tokenSecretRef"),
        lambda r: {"name": r.choice(["tf-cloud-token", "ngc"]), "key": "token"},
        OBJECT,
    ),
    Field(
        "near-name",
        ("valueFrom", "secretKeyRef"),
        lambda r: {"name": "greptime", "key": r.choice(["password", "token"])},
        OBJECT,
    ),
    Field(
        "near-name",
        ("volumes", "secret", "secretName"),
        _one_of("tensor-fusion-webhook-secret", "vault-tls", "foo"),
        OBJECT,
    ),
    Field(
        "near-name",
        ("passwordFile",),
        _one_of("/etc/x", "/etc/greptime/password", "/run/secrets/db-password"),
        ("yaml", "json", "flag", "escaped-1"),
    ),
    Field(
        "near-name",
        ("kubelet-client-key",),
        _one_of("/etc/kubernetes/pki/apiserver-kubelet-client.key"),
        ("flag",),
    ),
    Field(
        "near-name",
        ("kubelet-client-certificate",),
        _one_of("/etc/kubernetes/pki/apiserver-kubelet-client.crt"),
        ("flag",),
    ),
    Field(
        "near-name",
        ("users", "user", "client-key"),
        _one_of("/home/ops/.minikube/profiles/gpu/client.key", "/etc/kubernetes/pki/admin.key"),
        ("yaml", "json"),
    ),
    Field("near-name", ("security", "authorization"), _one_of("enabled", "disabled"), ("yaml",)),
    Field("near-name", ("spec", "automountServiceAccountToken"), _one_of(True, False), OBJECT),
    Field("near-name", ("token-ttl",), _one_of("24h0m0s", "2h0m0s", "0"), ("flag",)),
    Field("near-name", ("max_tokens",), _digits(16, 8192), ("log", "json", "yaml")),
    Field("near-name", ("token",), _one_of(""), ("yaml", "json", "escaped-1")),
    Field(
        "near-name",
        ("password",),
        _one_of("<redacted>", "********", "[REDACTED]"),
        ("log", "yaml", "json"),
    ),
    # --- more names that only look sensitive, as real tools print them. A bootstrap token's
    # `token-id` is "considered public information" (Kubernetes docs, Authenticating with
    # Bootstrap Tokens); its Secret is `bootstrap-token-<id>`. Every pod's projected
    # `serviceAccountToken` volume source (path and lifetime), a ServiceAccount's
    # `imagePullSecrets`, the kubelet's `authentication`/`authorization` config (kubelet
    # config file, KubeletConfiguration) and its flags, Hugging Face's tokenizer_config.json
    # special tokens, vLLM's `--max-num-batched-tokens`, OpenAI-style `usage`.
    Field("near-name", ("token-id",), _hex(6), ("log", "yaml", "json")),
    Field("near-name", ("secretName",), _fmt("bootstrap-token-{h}", h=_hex(6)), SCALAR),
    Field(
        "near-name",
        ("spec", "volumes", "projected", "sources", "serviceAccountToken"),
        lambda r: {"expirationSeconds": r.choice([3607, 3600, 86400]), "path": "token"},
        OBJECT,
    ),
    Field(
        "near-name",
        ("imagePullSecrets",),
        lambda r: [{"name": r.choice(["regcred", "ngc-secret"])}],
        OBJECT,
    ),
    Field(
        "near-name",
        ("authentication",),
        lambda r: {
            "anonymous": {"enabled": False},
            "webhook": {"cacheTTL": "2m0s", "enabled": True},
            "x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"},
        },
        OBJECT,
    ),
    Field(
        "near-name",
        ("authorization",),
        lambda r: {"mode": "Webhook", "webhook": {"cacheAuthorizedTTL": "5m0s"}},
        OBJECT,
    ),
    Field("near-name", ("authentication-token-webhook",), _one_of("true", "false"), ("flag",)),
    Field("near-name", ("anonymous-auth",), _one_of("true", "false"), ("flag",)),
    Field(
        "near-name",
        ("authorization-mode",),
        _one_of("Webhook", "Node,RBAC", "AlwaysAllow"),
        ("flag",),
    ),
    Field("near-name", ("max-num-batched-tokens",), _digits(512, 65536), ("flag",)),
    Field("near-name", ("bos_token",), _one_of("<|begin_of_text|>", "<s>"), ("json", "yaml")),
    Field("near-name", ("eos_token_id",), _digits(2, 128009), ("json", "yaml", "log")),
    Field(
        "near-name",
        ("usage",),
        lambda r: {
            "prompt_tokens": r.randint(1, 4000),
            "completion_tokens": r.randint(1, 900),
            "total_tokens": r.randint(1, 5000),
        },
        ("json", "escaped-2"),
    ),
    # PostgreSQL's `password_encryption` names the algorithm ("scram-sha-256" or "md5";
    # PostgreSQL docs, Connections and Authentication), set in postgresql.conf or CloudNativePG's
    # `spec.postgresql.parameters`; the docker image's `POSTGRES_HOST_AUTH_METHOD`.
    Field(
        "near-name",
        ("spec", "postgresql", "parameters", "password_encryption"),
        _one_of("scram-sha-256", "md5"),
        OBJECT,
    ),
    Field(
        "near-name",
        ("POSTGRES_HOST_AUTH_METHOD",),
        _one_of("scram-sha-256", "md5", "trust"),
        ("env",),
    ),
    # --- node identity (status.nodeInfo: machineID, systemUUID, bootID; spec.providerID as
    # the AWS cloud provider writes it).
    Field("uid", ("status", "nodeInfo", "machineID"), _hex(32), OBJECT),
    Field("uid", ("status", "nodeInfo", "bootID"), _uuid, OBJECT),
    Field("uid", ("status", "nodeInfo", "systemUUID"), lambda r: "ec2" + _uuid(r)[3:], OBJECT),
    Field("name", ("spec", "providerID"), _fmt("aws:///us-east-1a/i-0{h}", h=_hex(16)), SCALAR),
)


def _nvidia_smi_l(r: random.Random) -> str:
    # nvidia-smi -L: one line per GPU, MIG devices indented under theirs.
    gpu = f"GPU {r.randint(0, 7)}: NVIDIA A100-SXM4-80GB (UUID: GPU-{_uuid(r)})"
    mig = f"  MIG 1g.10gb     Device  {r.randint(0, 6)}: (UUID: MIG-{_uuid(r)})"
    return gpu + "\n" + mig


def _tf_start(r: random.Random) -> str:
    # TensorFusion's controller and hypervisor print their build on start (main.go), as the
    # sample bundles hold it.
    version, commit = _SEMVER(r), _hex(40)(r)
    time = f"2026-0{r.randint(1, 9)}-1{r.randint(0, 9)}T07:46:05Z"
    if r.random() < 0.5:
        return f'I1130 09:12:03.402117       1 main.go:181] "version: {version}, hash: {commit}, time: {time}" logger="setup"'
    return f"I1130 08:31:26.301455    7702 main.go:71] tensor fusion hypervisor starting. version: {version}, hash: {commit}, time: {time}"


def _join_config(r: random.Random) -> str:
    # kubeadm config print join-defaults, with the CA hash filled in (v1beta3).
    return (
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n"
        "  bootstrapToken:\n    caCertHashes:\n"
        f"    - {_sha256(r)}\n    unsafeSkipCAVerification: false\n  timeout: 5m0s"
    )


LINES: tuple[Line, ...] = (
    Line(
        "kubeadm-hash",
        _fmt("kubeadm join k8s-api.example.com:6443 --discovery-token-ca-cert-hash {h}", h=_sha256),
    ),
    Line("kubeadm-hash", _join_config),
    Line("digest", _fmt('Successfully pulled image "{r}@{d}" in 2.1s', r=_REPOS, d=_sha256)),
    # crictl images --digests: IMAGE TAG DIGEST IMAGE-ID SIZE, ids cut to 13 hex.
    Line("digest", _fmt("{r}   v1.0.0   {d}   {i}   45.3MB", r=_REPOS, d=_hex(13), i=_hex(13))),
    Line("commit", _tf_start),
    # nvidia-ctk --version.
    Line(
        "commit",
        _fmt("NVIDIA Container Toolkit CLI version {v}\ncommit: {c}", v=_SEMVER, c=_hex(40)),
    ),
    Line("uid", _nvidia_smi_l),
    # An access log: the request id and the W3C trace context headers, AWS ALB's trace id.
    Line(
        "uid",
        _fmt(
            '2026-11-30T08:31:10Z "GET /api/v1/gpupools HTTP/1.1" 200 x-request-id={u} traceparent=00-{t}-{s}-01 X-Amzn-Trace-Id=Root=1-{e}-{r}',
            u=_uuid,
            t=_hex(32),
            s=_hex(16),
            e=_hex(8),
            r=_hex(24),
        ),
    ),
    # nvidia-smi -q.
    Line("uid", _fmt("    GPU UUID                              : GPU-{u}", u=_uuid)),
    # kubelet: klog key/value pairs.
    Line(
        "uid",
        _fmt(
            'I1130 08:31:10.214733    2211 kubelet.go:2450] "SyncLoop ADD" source="api" pods=["tensor-fusion-sys/tf-worker-{s}"] podUID="{u}"',
            s=_safe(5),
            u=_uuid,
        ),
    ),
    # kubectl version's Go struct (before 1.28) and go version -m's build lines.
    Line(
        "commit",
        _fmt(
            'Server Version: version.Info{{Major:"1", Minor:"{m}", GitVersion:"v1.{m}.2", GitCommit:"{c}", GitTreeState:"clean", BuildDate:"2024-06-11T20:20:00Z", GoVersion:"go1.22.4", Compiler:"gc", Platform:"linux/amd64"}}',
            m=_digits(24, 33),
            c=_hex(40),
        ),
    ),
    Line(
        "commit",
        _fmt(
            "/usr/local/bin/manager: go1.22.4\n\tbuild\tvcs=git\n\tbuild\tvcs.revision={c}\n\tbuild\tvcs.time=2026-08-18T07:46:05Z",
            c=_hex(40),
        ),
    ),
    # helm list.
    Line(
        "version",
        _fmt(
            "tensor-fusion\ttensor-fusion-sys\t{n}\t2026-11-30 08:31:10.2 +0000 UTC\tdeployed\ttensor-fusion-{v}\t{v}",
            n=_digits(1, 40),
            v=_SEMVER,
        ),
    ),
    # nvidia-smi's header.
    Line(
        "version",
        _fmt(
            "| NVIDIA-SMI {d}             Driver Version: {d}     CUDA Version: 12.{c}     |",
            d=_DRIVER,
            c=_digits(0, 9),
        ),
    ),
    Line(
        "version",
        _fmt(
            "Client Version: v1.{m}.{p}\nKustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3\nServer Version: v1.{m}.{p}",
            m=_digits(24, 33),
            p=_digits(0, 12),
        ),
    ),
    # coreutils sha256sum.
    Line("checksum", _fmt("{h}  tensor-fusion-{v}.tgz", h=_hex(64), v=_SEMVER)),
    Line(
        "name",
        _fmt(
            "NAME   STATUS   ROLES    AGE   VERSION\n{n}   Ready    <none>   12d   v1.30.2", n=_NODE
        ),
    ),
    # nvidia-smi -q: the VBIOS version has five parts, the kernel release several.
    Line(
        "version",
        _fmt(
            "    VBIOS Version                         : {a}.00.{b}.00.{c}",
            a=_digits(86, 96),
            b=_digits(10, 99),
            c=_one_of("01", "03", "0A"),
        ),
    ),
    Line(
        "version",
        _fmt(
            "Linux gpu-node-3 5.15.0-{n}-aws #{m}~20.04.1-Ubuntu SMP x86_64 GNU/Linux",
            n=_digits(1000, 1080),
            m=_digits(10, 99),
        ),
    ),
    # kubectl get secrets; an event about a missing Secret; a klog line from client-go's
    # token source file.
    Line(
        "near-name",
        _fmt(
            "NAME                   TYPE                            DATA   AGE\nbootstrap-token-{h}   bootstrap.kubernetes.io/token   6      23h",
            h=_hex(6),
        ),
    ),
    Line(
        "near-name",
        _fmt(
            "password_encryption = {a}\t\t# scram-sha-256 or md5", a=_one_of("scram-sha-256", "md5")
        ),
    ),
    Line(
        "near-name",
        _one_of(
            'MountVolume.SetUp failed for volume "cert" : secret "tensor-fusion-webhook-secret" not found'
        ),
    ),
    Line(
        "near-name",
        _fmt(
            'E1130 08:31:10.214733       1 token_source.go:{n}] "Unable to rotate token" err="token has expired"',
            n=_digits(50, 200),
        ),
    ),
)


def _nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    obj: Any = value
    for name in reversed(path):
        obj = {name: obj}
    return obj


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)).upper()


def _flag_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower())


def _yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, width=4096)


def _applied(obj: dict[str, Any]) -> dict[str, Any]:
    """An object as `kubectl apply` annotates it: itself, as JSON, in a string."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"annotations": {LAST_APPLIED: json.dumps(obj)}, "name": "tf-config"},
    }


def _docker_log(line: str) -> dict[str, str]:
    """A line as Docker's json-file log driver stores it."""
    return {"log": line + "\n", "stream": "stdout", "time": "2026-11-30T08:31:10.214733Z"}


def _field_case(field: Field, syntax: str, r: random.Random) -> Case:
    value = field.value(r)
    name = field.path[-1]
    obj = _nest(field.path, value)
    shown = json.dumps(value) if isinstance(value, (bool, list, dict)) else value
    if syntax == "log":
        if r.random() < 0.5:
            text = f"2026-11-30T08:31:10Z INFO reconcile done {name}={shown} elapsed=12ms"
        else:
            text = f'I1130 08:31:10.214733       1 reconciler.go:88] "Synced" {name}="{shown}"'
        return Case(field.cls, syntax, text)
    if syntax == "env":
        return Case(field.cls, syntax, f"{_env_name(name)}={shown}")
    if syntax == "flag":
        sep = "=" if r.random() < 0.5 else " "
        return Case(
            field.cls, syntax, f"/usr/local/bin/manager --{_flag_name(name)}{sep}{shown} --v=2"
        )
    if syntax == "yaml":
        text = _yaml(obj)
        return Case(field.cls, syntax, text, ("case.yaml", text.encode()))
    if syntax == "json":
        return Case(field.cls, syntax, json.dumps(obj, indent=4), ("case.json", dump_json(obj)))
    applied = _applied(obj)
    if syntax == "escaped-1":
        return Case(field.cls, syntax, json.dumps(applied), ("case.json", dump_json(applied)))
    assert syntax == "escaped-2"
    return Case(field.cls, syntax, json.dumps(_docker_log(json.dumps(applied))))


def _line_cases(line: Line, r: random.Random) -> list[Case]:
    text = line.text(r)
    once = _docker_log(text)
    config = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"output.txt": text + "\n"}}
    return [
        Case(line.cls, "log", text),
        Case(line.cls, "yaml", _yaml(config), ("case.yaml", _yaml(config).encode())),
        Case(line.cls, "json", json.dumps(config, indent=4), ("case.json", dump_json(config))),
        Case(line.cls, "escaped-1", json.dumps(once)),
        Case(line.cls, "escaped-2", json.dumps({"message": json.dumps(once)})),
    ]


def cases(seed: int = SEED, repeats: int = REPEATS) -> list[Case]:
    r = random.Random(seed)
    out = []
    for _ in range(repeats):
        for field in FIELDS:
            out.extend(_field_case(field, syntax, r) for syntax in field.syntaxes)
        for line in LINES:
            out.extend(_line_cases(line, r))
    return out


def kept(redactor: Redactor, case: Case) -> bool:
    if redactor.redact_text(case.text) != case.text:
        return False
    if case.member is None:
        return True
    name, data = case.member
    return redact_member(redactor, name, data, bundle=name.endswith(".json")) == data


def misses(key: bytes = b"public-values-key-0123456789abcd") -> tuple[list[Case], list[Case]]:
    """(every case, the cases redaction changed)."""
    redactor = Redactor(key=key)
    every = cases()
    return every, [c for c in every if not kept(redactor, c)]


def precision() -> tuple[int, int, dict[str, tuple[int, int]]]:
    """(kept, total, {class: (kept, total)}) over the public values."""
    every, missed = misses()
    per_class: dict[str, tuple[int, int]] = {}
    lost = {id(c) for c in missed}
    for c in every:
        k, t = per_class.get(c.cls, (0, 0))
        per_class[c.cls] = (k + (id(c) not in lost), t + 1)
    return len(every) - len(missed), len(every), per_class


def main() -> None:
    k, total, per_class = precision()
    print(f"public values kept byte-identical: {k / total:.1%} ({k} of {total})")
    print("   " + ", ".join(f"{c} {a}/{b}" for c, (a, b) in sorted(per_class.items())))


if __name__ == "__main__":
    main()
