"""Secrets inside JSON string literals, at any depth of escaping: only the secret's escaped
bytes change, and one secret has one pseudonym whatever its depth."""

from __future__ import annotations

import base64
import json
import os

import pytest
import redact_throughput as bench
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from collector.redact import Redactor
from collector.redact.escaped import decode

KEY = b"escaped-test-key-0123456789abcdef"
EXAMPLES = int(os.environ.get("TF_REDACT_EXAMPLES", "150"))
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


# A registry Secret as users make it: `kubectl create secret docker-registry` writes the config
# compact, `--from-file=.dockerconfigjson=~/.docker/config.json` takes the file docker login
# wrote (indented by a tab), jq and Python indent by two; `.dockercfg` is the legacy form,
# without `auths`.
CONFIGS = {
    "compact": json.dumps(json.loads(DOCKER_CONFIG), separators=(",", ":")),
    "docker-login": json.dumps(json.loads(DOCKER_CONFIG), indent="\t"),
    "two-spaces": json.dumps(json.loads(DOCKER_CONFIG), indent=2),
    "legacy": json.dumps({"registry.acme.io": {"auth": AUTH, "email": "ci@acme.io"}}),
}
# Where a bundle shows the Secret's value as text: a YAML line of `kubectl get -o yaml`, a
# JSON member, a line of a log, and the bare value after a word (echoed by a script).
CONTEXTS = {
    "yaml": "  .dockerconfigjson: {}\n",
    "yaml-legacy": "  .dockercfg: {}\n",
    "json": '{{"data":{{".dockerconfigjson":"{}"}},"type":"kubernetes.io/dockerconfigjson"}}',
    "log": 'I0301 09:10:05.123456 1 secret.go:88] synced ".dockerconfigjson"="{}"\n',
    "bare": "pull secret is {} for the registry\n",
}


@given(
    config=st.sampled_from(sorted(CONFIGS)),
    context=st.sampled_from(sorted(CONTEXTS)),
    depth=st.integers(0, 3),
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_a_dockerconfigjson_seen_as_text_goes_whole_at_any_depth(
    config: str, context: str, depth: int
) -> None:
    if context == "bare" and config == "legacy":
        return  # no name and no shape: a legacy config is known only by its key
    blob = base64.b64encode(CONFIGS[config].encode()).decode()
    head, _, tail = CONTEXTS[context].partition("{}")
    text, start, end = bench.nest(head + blob + tail, len(head), len(head) + len(blob), depth)
    redactor = Redactor(key=KEY)
    out = redactor.redact_text(text)
    assert out.startswith(text[:start]) and out.endswith(text[end:]), out
    placeholder = out[start : len(out) - len(text) + end]
    assert placeholder.startswith("<redacted:docker-auth:"), out
    assert redactor.mapping() == {blob: placeholder}


# Documents inside documents, as a bundle holds them: YAML in a ConfigMap value printed by
# `kubectl get -o json`, JSON in a ConfigMap value printed as YAML, Helm values in an
# annotation, an env file in a ConfigMap; the secret under the names real configs use.
def _configmap(data: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": data}


EMBEDDED = {
    "yaml-in-json": lambda k, v: json.dumps(
        _configmap({"config.yaml": f"db:\n  host: pg\n  {k}: {v}\n"}), indent=2
    ),
    "json-in-yaml": lambda k, v: yaml.safe_dump(
        _configmap({"config.json": json.dumps({"db": {"host": "pg", k: v}})})
    ),
    "helm-values-annotation": lambda k, v: json.dumps(
        {
            "metadata": {
                "annotations": {"meta.helm.sh/values": yaml.safe_dump({"greptime": {k: v}})}
            }
        },
        indent=2,
    ),
    "env-file": lambda k, v: json.dumps(
        _configmap({"app.env": f"DB_HOST=pg\n{k.upper()}={v}\n"}), indent=2
    ),
}


@given(
    form=st.sampled_from(sorted(EMBEDDED)),
    name=st.sampled_from(["password", "api_key", "auth_token", "client_secret"]),
    value=st.text(alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=8, max_size=32).map(
        lambda s: "Q" + s + "z7"
    ),
    depth=st.integers(0, 3),
)  # fmt: skip
@settings(max_examples=EXAMPLES, deadline=None)
def test_a_secret_in_an_embedded_document_goes_alone_at_any_depth(
    form: str, name: str, value: str, depth: int
) -> None:
    text = EMBEDDED[form](name, value)
    start = text.index(value)
    text, start, end = bench.nest(text, start, start + len(value), depth)
    redactor = Redactor(key=KEY)
    out = redactor.redact_text(text)
    assert out.startswith(text[:start]) and out.endswith(text[end:]), out
    placeholder = out[start : len(out) - len(text) + end]
    assert redactor.mapping() == {value: placeholder}
