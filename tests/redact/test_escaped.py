"""Secrets inside JSON string literals, at any depth of escaping: only the secret's escaped
bytes change, and one secret has one pseudonym whatever its depth."""

from __future__ import annotations

import base64
import json

import pytest

from collector.redact import Redactor
from collector.redact.escaped import decode

KEY = b"escaped-test-key-0123456789abcdef"
PASSWORD = "Qx7vLm2pRt9sWz4k"
AUTH = base64.b64encode(b"robot$ci:" + PASSWORD.encode()).decode()
DOCKER_CONFIG = json.dumps(
    {"auths": {"registry.acme.io": {"username": "robot$ci", "password": PASSWORD, "auth": AUTH}}},
    separators=(",", ":"),
)


def docker_config_map() -> dict:
    """A ConfigMap holding a docker config, applied with kubectl: the config is JSON in the
    ConfigMap and JSON in a JSON string in its last-applied-configuration annotation."""
    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "docker-cfg", "namespace": "ml-team"},
        "data": {"config.json": DOCKER_CONFIG},
    }
    return {
        **applied,
        "metadata": {
            **applied["metadata"],
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    applied, separators=(",", ":")
                )
            },
        },
    }


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_a_docker_auth_in_last_applied_configuration_goes_at_any_depth(depth: int) -> None:
    text = json.dumps(docker_config_map(), indent=2)  # as kubectl get -o json prints it
    for _ in range(depth):  # ... logged as a JSON message, and that logged again
        text = json.dumps({"level": "info", "msg": text})
    redactor = Redactor(key=KEY)
    out = redactor.redact_text(text)
    assert AUTH not in out and PASSWORD not in out
    assert "robot$ci" in out and "registry.acme.io" in out  # names stay readable
    mapping = redactor.mapping()
    assert set(mapping) == {PASSWORD, AUTH}
    assert mapping[AUTH].startswith("<redacted:docker-auth:")
    # Only those bytes changed: putting the originals back gives the input.
    back = out
    for original, placeholder in mapping.items():
        back = back.replace(placeholder, original)
    assert back == text


def test_one_secret_one_pseudonym_at_every_depth() -> None:
    redactor = Redactor(key=KEY)
    line = f'connect password="{PASSWORD}" host=db'
    placeholders = set()
    for _ in range(4):
        out = redactor.redact_text(line)
        placeholders |= {p for p in redactor.mapping().values()}
        assert PASSWORD not in out
        line = json.dumps({"msg": line})
    assert len(placeholders) == 1


def test_decode_maps_every_character_to_the_bytes_that_write_it() -> None:
    body = 'a\\"b\\\\c\\u00e9\\n'
    text, where = decode(body)
    assert text == 'a"b\\cé\n'
    assert where == [0, 1, 3, 4, 6, 7, 13, 15]
    assert decode("bad \\x escape") is None
    assert decode("cut off \\") is None
