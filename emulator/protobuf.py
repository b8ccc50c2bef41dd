"""Access reviews in Kubernetes' protobuf encoding, read into their JSON form.

kubectl 1.36 and later sends built-in types as protobuf (client-go's generated clients prefer it;
its 415 fallback to JSON covers CBOR only, rest/client.go), so `kubectl auth can-i` posts a
SelfSubjectAccessReview the API server decodes and answers. The envelope is "k8s\\0" and a
runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}; raw is the review. Only the
spec is read (field numbers from k8s.io/api authorization/v1 generated.proto): the server sets
the status, and the metadata of a review is empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"

# A message's fields to read: number -> (JSON name, the nested message's fields; None: a string).
Fields = dict[int, tuple[str, "Fields | None"]]

_TYPE_META: Fields = {1: ("apiVersion", None), 2: ("kind", None)}
_RESOURCE_ATTRIBUTES: Fields = {
    1: ("namespace", None),
    2: ("verb", None),
    3: ("group", None),
    4: ("version", None),
    5: ("resource", None),
    6: ("subresource", None),
    7: ("name", None),
}
_SPECS: dict[str, Fields] = {
    "SelfSubjectAccessReview": {
        1: ("resourceAttributes", _RESOURCE_ATTRIBUTES),
        2: ("nonResourceAttributes", {1: ("path", None), 2: ("verb", None)}),
    },
    "SelfSubjectRulesReview": {1: ("namespace", None)},
}


class ProtobufError(ValueError):
    """A body that is not a protobuf-encoded review this server reads."""


def decode_review(body: bytes) -> dict[str, Any]:
    """The review in `body` as its JSON object: apiVersion, kind and spec."""
    if not body.startswith(_MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    unknown = {number: value for number, value in _fields(body[len(_MAGIC) :])}
    out = _message(_bytes(unknown.get(1, b"")), _TYPE_META)
    spec = _SPECS.get(out.get("kind", ""))
    if spec is None:
        raise ProtobufError(f"cannot decode kind {out.get('kind', '')!r} from protobuf")
    out.update(_message(_bytes(unknown.get(2, b"")), {2: ("spec", spec)}))
    return out


def _message(data: bytes, fields: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        if number not in fields or not isinstance(value, bytes):
            continue
        name, nested = fields[number]
        if nested is not None:
            out[name] = _message(value, nested)
        elif value:  # JSON omits the empty strings protobuf carries (omitempty)
            out[name] = value.decode("utf-8", errors="replace")
    return out


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field: an int for a varint, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield key >> 3, value
            continue
        if wire == 2:
            size, pos = _varint(data, pos)
        elif wire in (1, 5):  # fixed 64 or 32 bits
            size = 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"unsupported protobuf wire type {wire}")
        if pos + size > len(data):
            raise ProtobufError("truncated protobuf field")
        yield key >> 3, data[pos : pos + size]
        pos += size


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            break
    raise ProtobufError("truncated or overlong protobuf varint")


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("a message field holds a varint")
    return value
