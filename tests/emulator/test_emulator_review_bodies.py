"""Access reviews posted as JSON, as protobuf (kubectl >= 1.36) and in a type the server lacks."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest
from faultkit import FaultyEmulator

from emulator.protobuf import ProtobufError, decode_review

SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
# What kubectl 1.37.1 posts for `auth can-i create pods --subresource=exec -n ml`.
CAN_I_EXEC = (
    b"k8s\x00\n2\n\x17authorization.k8s.io/v1\x12\x17SelfSubjectAccessReview\x12>\n\x10\n\x00"
    b'\x12\x00\x1a\x00"\x00*\x002\x008\x00B\x00\x12 \n\x1e\n\x02ml\x12\x06create\x1a\x00"\x00'
    b'*\x04pods2\x04exec:\x00\x1a\x08\x08\x00\x12\x00\x1a\x00 \x00\x1a\x00"\x00'
)


def _post(emu: FaultyEmulator, body: bytes, content_type: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(emu.host, emu.port, timeout=5)
    try:
        headers = {"Content-Type": content_type, "Accept": f"{content_type},application/json"}
        conn.request("POST", SSAR_PATH, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_protobuf_review_reads_as_json() -> None:
    assert decode_review(CAN_I_EXEC) == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {
            "resourceAttributes": {
                "namespace": "ml",
                "verb": "create",
                "resource": "pods",
                "subresource": "exec",
            }
        },
    }


@pytest.mark.parametrize(
    "body",
    [CAN_I_EXEC[4:], CAN_I_EXEC[:40], b"k8s\x00\xff", b"k8s\x00\n\x02\n\x00"],
    ids=["no-prefix", "truncated", "bad-varint", "no-kind"],
)
def test_broken_protobuf_is_refused(body: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode_review(body)


def test_review_by_content_type(emulator: FaultyEmulator) -> None:
    code, review = _post(emulator, CAN_I_EXEC, "application/vnd.kubernetes.protobuf")
    assert (code, review["status"]) == (201, {"allowed": True})
    assert review["spec"]["resourceAttributes"]["subresource"] == "exec"
    emulator.faults.add(resource="pods", verb="exec", namespace="ml", status=403)
    assert _post(emulator, CAN_I_EXEC, "application/vnd.kubernetes.protobuf")[1]["status"] == {
        "allowed": False
    }
    as_json = json.dumps({"spec": review["spec"]}).encode()
    assert _post(emulator, as_json, "application/json")[1]["status"] == {"allowed": False}
    code, status = _post(emulator, CAN_I_EXEC[:40], "application/vnd.kubernetes.protobuf")
    assert (code, status["reason"]) == (400, "BadRequest")
    # A type the server does not read: 415, on which client-go retries a CBOR request as JSON.
    code, status = _post(emulator, b"\xa0", "application/cbor")
    assert (code, status["reason"], status["message"]) == (
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/vnd.kubernetes.protobuf",
    )
