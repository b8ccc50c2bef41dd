"""Public values stay: kubeadm's CA cert hash, image digests, commits, UUIDs, versions,
checksums and the names that only look sensitive, in every syntax a bundle holds them
(bench/public_values.py builds the cases), and the secrets beside them still go."""

from __future__ import annotations

import json

import public_values as pv  # the bench's cases (bench/ is on the tests' path)

from collector.redact import Redactor

KEY = b"public-values-test-key-012345678"
HASH = "sha256:" + "3c" * 32
APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def test_public_values_are_kept_in_every_class() -> None:
    every, missed = pv.misses()
    kept, total, per_class = pv.precision()
    redactor = Redactor(key=KEY)
    shown = "\n".join(
        f"{c.cls}/{c.syntax}: {c.text!r}\n  -> {redactor.redact_text(c.text)!r}" for c in missed
    )
    assert kept / total >= 0.99, shown
    assert {c: k for c, (k, t) in per_class.items() if k != t} == {}, shown
    assert total == len(every) >= 1500


def test_the_case_set_is_fixed_and_covers_every_syntax() -> None:
    every = pv.cases()
    assert every == pv.cases()  # seeded: the same cases on every run
    assert {c.cls for c in every} == {
        "kubeadm-hash",
        "digest",
        "commit",
        "uid",
        "version",
        "quantity",
        "checksum",
        "name",
        "near-name",
    }
    syntaxes = {"log", "env", "flag", "yaml", "json", "escaped-1", "escaped-2"}
    assert {c.syntax for c in every} == syntaxes
    assert {c.syntax for c in every if c.cls == "kubeadm-hash"} == syntaxes


def test_kubeadm_join_keeps_the_ca_hash_and_replaces_the_token() -> None:
    line = f"kubeadm join k8s-api.example.com:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash {HASH}"
    out = Redactor(key=KEY).redact_text(line)
    assert out.startswith("kubeadm join k8s-api.example.com:6443 --token <redacted:kubeadm-token:")
    assert out.endswith(f" --discovery-token-ca-cert-hash {HASH}")


def test_a_helm_checksum_annotation_stays_and_a_secret_named_alike_goes() -> None:
    digest = "9f" * 32
    r = Redactor(key=KEY)
    assert r.redact_text(f"    checksum/secret: {digest}\n") == f"    checksum/secret: {digest}\n"
    assert r.redact_text(f"    secret: {digest}\n").startswith("    secret: <redacted:secret:")
    obj = {"metadata": {"annotations": {"checksum/secret": digest, "vault/secret": digest}}}
    out = r.redact_object(obj)["metadata"]["annotations"]
    assert out["checksum/secret"] == digest
    assert out["vault/secret"].startswith("<redacted:secret:")


def test_key_file_paths_and_switches_stay_and_key_data_goes() -> None:
    r = Redactor(key=KEY)
    flag = "--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key"
    assert r.redact_text(flag) == flag
    assert r.redact_text("security:\n  authorization: enabled\n").endswith(
        "authorization: enabled\n"
    )
    data = "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n"
    assert "LS0tLS1CRUdJTi" not in r.redact_text(data)


def test_last_applied_configuration_keeps_what_the_object_keeps() -> None:
    """The applied object inside the annotation is judged as the object is: a token goes, an
    image digest stays; a Secret's data too short to find safely takes the annotation whole."""
    image = f"nvcr.io/nvidia/k8s-device-plugin@{HASH}"
    deployment = {
        "spec": {
            "image": image,
            "env": [{"name": "HF_TOKEN", "value": "hf-applied-value-0042"}],
        }
    }
    r = Redactor(key=KEY)
    out = r.redact_object({"metadata": {"annotations": {APPLIED: json.dumps(deployment)}}})
    applied = json.loads(out["metadata"]["annotations"][APPLIED])
    assert applied["spec"]["image"] == image
    assert applied["spec"]["env"][0]["value"].startswith("<redacted:token:")

    secret = {"kind": "Secret", "data": {"pin": "MTIz"}}  # base64 of "123"
    out = r.redact_object({"metadata": {"annotations": {APPLIED: json.dumps(secret)}}})
    assert out["metadata"]["annotations"][APPLIED].startswith(
        "<redacted:last-applied-configuration:"
    )
