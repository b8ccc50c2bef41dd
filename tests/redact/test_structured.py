"""Redaction by construction: objects are judged by the meaning of their fields."""

from __future__ import annotations

import copy
import json

import pytest

from collector.bundle import dump_json
from collector.redact import Redactor

KEY = b"structured-test-key-0123456789ab"


def _pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "tensorfusion-worker-abc",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"spec":{"env":[{"name":"HF_TOKEN","value":"applied-secret"}],"nodeName":"gpu-node-3"}}',
                "tensor-fusion.ai/gpu-ids": "gpu-337d5efe-90a4-32c4-afcb-78ea5e3a5606",
                "tensor-fusion.ai/container-gpus": '{"pytorch":["gpu-337d5efe"]}',
            },
        },
        "spec": {
            "containers": [
                {
                    "name": "worker",
                    "image": "tensorfusion/tensor-fusion-worker:1.35.2",
                    "args": ["--token", "argtoken-123", "--port", "8000", "--api-key=argkey-456"],
                    "env": [
                        {"name": "TF_LICENSE", "value": "license-abc"},
                        {"name": "TF_LICENSE_SIGN", "value": "sign-def"},
                        {
                            "name": "TF_CUDA_LIB_PATH",
                            "value": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                        },
                        {"name": "TSDB_MYSQL_PASSWORD", "value": ""},
                        {
                            "name": "GREPTIME_PASSWORD",
                            "valueFrom": {"secretKeyRef": {"name": "g", "key": "password"}},
                        },
                        {"name": "DISABLE_CONNECTION_AUTH", "value": "true"},
                        {"name": "HF_TOKEN", "value": "hfvalue-plain"},
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "cert",
                    "secret": {"secretName": "tensor-fusion-webhook-secret", "defaultMode": 420},
                }
            ],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        },
    }


def test_pod_fields_redacted_by_meaning() -> None:
    r = Redactor(key=KEY)
    pod = _pod()
    before = copy.deepcopy(pod)
    out = r.redact_object(pod, member="objects/pods/ns.json")
    assert pod == before  # the input is not changed
    text = r.redact_bytes(dump_json(out)).decode()
    for secret in (
        "applied-secret",
        "license-abc",
        "sign-def",
        "argtoken-123",
        "argkey-456",
        "hfvalue-plain",
    ):
        assert secret not in text
    env = {e["name"]: e.get("value") for e in out["spec"]["containers"][0]["env"]}
    assert env["TF_LICENSE"].startswith("<redacted:license:")
    assert env["TF_LICENSE_SIGN"].startswith("<redacted:license:")
    assert env["TF_CUDA_LIB_PATH"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    assert env["TSDB_MYSQL_PASSWORD"] == ""
    assert env["DISABLE_CONNECTION_AUTH"] == "true"
    assert out["spec"]["volumes"] == before["spec"]["volumes"]
    assert out["spec"]["tolerations"] == before["spec"]["tolerations"]
    annotations = out["metadata"]["annotations"]
    # The applied object is judged as the object is: its token goes, its node name stays.
    applied = json.loads(annotations["kubectl.kubernetes.io/last-applied-configuration"])
    assert applied["spec"]["nodeName"] == "gpu-node-3"
    assert applied["spec"]["env"][0]["value"].startswith("<redacted:token:")
    assert (
        annotations["tensor-fusion.ai/container-gpus"]
        == before["metadata"]["annotations"]["tensor-fusion.ai/container-gpus"]
    )
    args = out["spec"]["containers"][0]["args"]
    assert args[0] == "--token" and args[1].startswith("<redacted:token:") and args[3] == "8000"


def test_kubeconfig_and_dockerconfig_fields() -> None:
    r = Redactor(key=KEY)
    cm = {
        "kind": "ConfigMap",
        "data": {
            "kubeconfig": (
                "apiVersion: v1\nusers:\n- name: admin\n  user:\n"
                "    client-certificate-data: Y2VydGRhdGFjZXJ0ZGF0YQ==\n"
                "    client-key-data: a2V5ZGF0YWtleWRhdGFrZXk=\n"
                "    token: kubeconfig-bearer-token\n"
            ),
            ".dockerconfigjson": '{"auths":{"nvcr.io":{"username":"$oauthtoken","password":"ngcpassword1","auth":"JG9hdXRodG9rZW46bmdjcGFzc3dvcmQx"}}}',
        },
    }
    out = r.redact_object(cm)
    kubeconfig = out["data"]["kubeconfig"]
    for secret in (
        "Y2VydGRhdGFjZXJ0ZGF0YQ==",
        "a2V5ZGF0YWtleWRhdGFrZXk=",
        "kubeconfig-bearer-token",
    ):
        assert secret not in kubeconfig
    assert kubeconfig.startswith("apiVersion: v1\nusers:\n- name: admin\n")  # layout kept
    docker = json.loads(out["data"][".dockerconfigjson"])
    entry = docker["auths"]["nvcr.io"]
    assert entry["username"] == "$oauthtoken"
    assert entry["password"].startswith("<redacted:")
    assert entry["auth"].startswith("<redacted:docker-auth:")


def test_helm_values_keys() -> None:
    r = Redactor(key=KEY)
    values = {
        "greptime": {
            "isCloud": True,
            "host": "greptimedb.svc",
            "port": 4002,
            "user": "admin",
            "password": "gr-pass",
        },
        "agent": {"enrollToken": "enroll-tok", "cloudEndpoint": "wss://app.tensor-fusion.ai"},
        "cloudVendorCredentials": {
            "accessKey": "ak-value",
            "secretKey": "sk-value",
            "region": "us-west-2",
        },
        "credentials": {"aws": {"id": "cred-id", "key": "cred-key"}},
        "controller": {"admissionWebhooks": {"secretName": "tensor-fusion-webhook-secret"}},
        "imagePullSecrets": [{"name": "regcred"}],
        "initialGpuNodeLabelSelector": "nvidia.com/gpu.present=true",
    }
    out = r.redact_object(values, member="helm/tensor-fusion-sys.json")
    text = json.dumps(out)
    for secret in ("gr-pass", "enroll-tok", "ak-value", "sk-value", "cred-id", "cred-key"):
        assert secret not in text
    assert out["greptime"]["user"] == "admin" and out["greptime"]["port"] == 4002
    assert out["cloudVendorCredentials"]["region"] == "us-west-2"
    assert out["controller"] == values["controller"]
    assert out["imagePullSecrets"] == values["imagePullSecrets"]
    summary = r.summary()
    assert summary["files"]["helm/tensor-fusion-sys.json"]["password"] == 1


def test_embedded_documents_keep_their_layout() -> None:
    r = Redactor(key=KEY)
    config = "# TensorFusion dynamic config\nmetricsTTL: 30d\ngreptime:\n  password: embedded-pw  # set by ops\nalertRules: []\n"
    out = r.redact_object({"data": {"config.yaml": config}})["data"]["config.yaml"]
    assert "embedded-pw" not in out
    assert out.startswith("# TensorFusion dynamic config\nmetricsTTL: 30d\n")
    assert out.count("\n") == config.count("\n")


def test_json_lines_are_redacted_by_structure() -> None:
    r = Redactor(key=KEY)
    line = '{"level":"info","msg":"vendor","credentials":{"id":"AKIDnested","key":"nested-key-value"},"note":"a \\"quoted\\" msg"}\n'
    out = r.redact_text(line * 2)
    assert "nested-key-value" not in out and "AKIDnested" not in out
    assert out.count("<redacted:credential:") == 4
    assert json.loads(out.splitlines()[0])["note"] == 'a "quoted" msg'


# One walker judges decoded values, whether it replaces them (an object tf-collect read) or
# lists them to be replaced where they are written (the same object as a JSON log line).
ONE_JUDGEMENT = [
    {"headers": {"Authorization": ["Bearer abcDEF123ghi456JKL"], "Accept": ["*/*"]}},
    {"env": [{"name": "TSDB_MYSQL_PASSWORD", "value": "Xk29sLq7Vt"}, {"name": "TZ", "value": "UTC"}]},
    {"auths": {"registry.acme.io": {"username": "ci", "auth": "Y2k6UXg3dkxtMnBSdDlzV3o0aw=="}}},
    {"args": ["--token", "tkn_Qx7vLm2pRt9sWz4k", "--verbose"]},
    {"kind": "Secret", "data": {"tls.key": "LS0tLS1CRUdJTi1GQUtFLUtFWQ=="}},
]  # fmt: skip


@pytest.mark.parametrize("doc", ONE_JUDGEMENT, ids=[str(i) for i in range(len(ONE_JUDGEMENT))])
def test_objects_and_json_lines_lose_the_same_values(doc: dict) -> None:
    as_object = Redactor(key=KEY)
    as_line = Redactor(key=KEY)
    from_object = json.dumps(as_object.redact_object(doc), separators=(",", ":"))
    from_line = as_line.redact_text(json.dumps(doc, separators=(",", ":")))
    assert from_object == from_line
    assert as_object.mapping() == as_line.mapping() != {}


def test_a_header_map_keeps_its_scheme_in_an_object() -> None:
    out = Redactor(key=KEY).redact_object({"Authorization": ["Bearer abcDEF123ghi456JKL"]})
    (value,) = out["Authorization"]
    assert value.startswith("Bearer <redacted:bearer-token:")
