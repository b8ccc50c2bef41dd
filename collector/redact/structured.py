"""Structure-aware redaction of decoded objects (Kubernetes objects, Helm values, JSON/YAML
documents found inside string values and log lines), before anything is serialised.

By meaning, not by shape: the value of an env var named `TF_LICENSE`, of a key named
`password`, of the `kubectl.kubernetes.io/last-applied-configuration` annotation, of the flag
after `--token` in a container's args, and every credential under `auths` (a
.dockerconfigjson), `credentials` or `cloudVendorCredentials`. Booleans, empty values, masks
and template references stay: they are not secrets and they are diagnostic.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any

import yaml

from .names import DOCUMENT_KEYWORDS, is_metadata_name, is_placeholder_value, sensitive_kind
from .patterns import refine_kind
from .pseudonyms import Pseudonyms
from .scan import Finder, Scan
from .spans import Hit

try:
    _YamlLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _YamlLoader = yaml.SafeLoader

# Containers whose every scalar is a credential, whatever the scalar's own name.
_CREDENTIAL_CONTAINERS = frozenset(
    {"auths", "credentials", "cloudvendorcredentials", "cloud-vendor-credentials", "creds"}
)
# Inside a credential container these still name things rather than hold secrets.
_CONTAINER_PLAIN_KEYS = frozenset({"email", "username", "user", "region", "type", "enabled"})
_MIN_TEXTUAL = 6  # shorter values found in a document are left to the pattern pass
_SECRET_DATA = ("data", "stringData")  # every value under these in a Secret is secret
_SCHEME = re.compile(r"(?i)(bearer|basic|token)\s+(?=\S{8})")


class Structured:
    """One structural pass; counts what it replaced by kind. The one walker of decoded values:
    it replaces (`redact`), or, for text whose values are replaced where they are written (a
    JSON line, a document in a ConfigMap value), it only lists them (`values_of`): the same
    judgement either way, and nothing named that is not replaced."""

    def __init__(self, pseudonyms: Pseudonyms | None, *, collect: bool = False) -> None:
        self.pseudonyms = pseudonyms  # None: collect mode names nothing
        self.counts: Counter[str] = Counter()
        self.collect = collect
        self.values: list[tuple[str, str]] = []  # (kind, value) found, in collect mode

    @classmethod
    def values_of(cls, doc: Any) -> list[tuple[str, str]]:
        """(kind, value) of every value a structural pass over `doc` would replace."""
        walker = cls(None, collect=True)
        walker._walk(doc, in_credentials=False)
        return walker.values

    # ------------------------------------------------------------------ objects
    def redact(self, obj: Any) -> Any:
        """A redacted copy of a decoded JSON/YAML value (the input is not changed)."""
        return self._walk(obj, in_credentials=False)

    def _walk(self, obj: Any, *, in_credentials: bool) -> Any:
        if isinstance(obj, dict):
            if _is_helm_release_record(obj):
                return self._helm_release_record(obj)
            if obj.get("kind") == "Secret":
                return self._secret_object(obj)
            member = self._member
            return {k: member(k, v, in_credentials) for k, v in obj.items()}
        if isinstance(obj, list):
            if obj and all(isinstance(a, str) for a in obj):
                return self._args(obj, in_credentials)
            return [self._walk(v, in_credentials=in_credentials) for v in obj]
        if isinstance(obj, str):
            return self.redact_document_text(obj)
        return obj

    # The hot path of a large collection (every member of every object): decisions that
    # depend on the key alone are made once per key (_key_info) and scalars never recurse.
    def _member(self, key: Any, value: Any, in_credentials: bool) -> Any:
        if not isinstance(key, str):
            return self._walk(value, in_credentials=in_credentials)
        container, kind, plain = _key_info(key)
        if (
            kind is not None
            and isinstance(value, list)
            and value
            and all(isinstance(v, str) for v in value)
        ):  # a header map: {"X-Api-Key": ["..."]}
            return [self._scalar(kind, v) for v in value]
        if isinstance(value, (dict, list)):
            if key == "env" and isinstance(value, list):
                return [self._env(item) for item in value]
            if container:
                return self._walk(value, in_credentials=True)
            if kind == "last-applied-configuration":
                return self._scalar(kind, value)
            return self._walk(value, in_credentials=in_credentials)
        if kind is not None:
            if kind == "docker-auth" and isinstance(value, str):
                return self._dockerconfig(value)
            if kind == "last-applied-configuration" and isinstance(value, str):
                return self._applied(value)
            return self._scalar(kind, value)
        if in_credentials and not plain:
            return self._scalar("credential", value)
        if isinstance(value, str) and _may_hold_document(value):
            return self.redact_document_text(value)
        return value

    def _helm_release_record(self, obj: dict[str, Any]) -> dict[str, Any]:
        # A Helm release kept in a ConfigMap (HELM_DRIVER=configmap): `release` is the whole
        # release, values and rendered manifests included, gzipped and base64-encoded, so no
        # pattern can see into it. The collector keeps a redacted projection of it elsewhere.
        out = {k: self._member(k, v, False) for k, v in obj.items() if k != "data"}
        data = obj.get("data")
        if isinstance(data, dict):
            out["data"] = {
                k: self._scalar("helm-release", v) if k == "release" else self._member(k, v, False)
                for k, v in data.items()
            }
        return out

    def _secret_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        # A Secret that reached us anyway (a manifest in a ConfigMap, a file redacted
        # offline): every value under data/stringData is secret, whatever its key.
        return {
            k: {n: self._scalar("secret", v) for n, v in v.items()}
            if k in _SECRET_DATA and isinstance(v, dict)
            else self._member(k, v, False)
            for k, v in obj.items()
        }

    def _scalar(self, kind: str, value: Any) -> Any:
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            value = str(value)
        if not isinstance(value, str) or is_placeholder_value(value):
            return value
        scheme = _SCHEME.match(value)
        head = ""
        if scheme is not None:  # "Bearer <token>": the scheme stays readable
            kind = "basic-auth" if scheme.group(1).lower() == "basic" else "bearer-token"
            head, value = value[: scheme.end()], value[scheme.end() :]
        kind = refine_kind(kind, value)
        if self.collect:
            self.values.append((kind, value))
            return head + value
        self.counts[kind] += 1
        assert self.pseudonyms is not None
        return head + self.pseudonyms.secret(kind, value)

    def _env(self, item: Any) -> Any:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and "value" in item:
            kind = sensitive_kind(item["name"])
            if kind is not None:
                return {**item, "value": self._scalar(kind, item["value"])}
        return self._walk(item, in_credentials=False)

    def _args(self, args: list[str], in_credentials: bool) -> list[str]:
        """Container args/command: the item after `--token` (no `=`) is the token."""
        out = []
        secret_next: str | None = None
        for arg in args:
            if secret_next is not None and not arg.startswith("-"):
                out.append(self._scalar(secret_next, arg))
                secret_next = None
                continue
            secret_next = None
            if arg.startswith("-") and "=" not in arg and " " not in arg:
                secret_next = sensitive_kind(arg)
            out.append(
                self._scalar("credential", arg)
                if in_credentials
                else self.redact_document_text(arg)
            )
        return out

    def _dockerconfig(self, value: str) -> str:
        try:
            doc = json.loads(value)
        except ValueError:
            return self._scalar("docker-auth", value)
        redacted = self._walk(doc, in_credentials=False)
        return json.dumps(redacted, separators=(",", ":"))

    def _applied(self, value: str) -> str:
        """kubectl's last-applied-configuration: the object as applied, in JSON. It is judged
        as the object itself is (a Secret's data goes, an image digest or a uid stays), its
        secrets replaced where they are written; when one is not written as decoded (an escape
        the encoder chose) or is too short to find safely, the annotation goes whole."""
        try:
            doc = json.loads(value)
        except ValueError:
            doc = None
        if isinstance(doc, (dict, list)):
            found = Structured.values_of(doc)
            if all(len(v) >= _MIN_TEXTUAL and v in value for _, v in found):
                return self._in_place(value, found)
        return self._scalar("last-applied-configuration", value)

    # ------------------------------------------------------------------ embedded documents
    def redact_document_text(self, text: str) -> str:
        """A string that holds a JSON or YAML document: redact its sensitive values in place.

        The values are found by parsing and replaced in the original text, so a ConfigMap's
        config.yaml keeps its layout, comments and line numbers.
        """
        doc = _parse_document(text)
        if doc is None:
            return text
        return self._in_place(text, Structured.values_of(doc))

    def _in_place(self, text: str, found: list[tuple[str, str]]) -> str:
        """`text` with the (kind, value) pairs a walk of its document found replaced."""
        if self.collect:  # the values inside it are this walk's too
            self.values.extend(found)
            return text
        # Longest first, so that a value inside another is not replaced half-way.
        for kind, value in sorted(found, key=lambda kv: -len(kv[1])):
            if len(value) < _MIN_TEXTUAL or value not in text:
                continue
            n = text.count(value)
            assert self.pseudonyms is not None
            text = text.replace(value, self.pseudonyms.secret(kind, value))
            self.counts[kind] += n
        return text


@lru_cache(maxsize=16384)
def _key_info(key: str) -> tuple[bool, str | None, bool]:
    """(holds credentials when a container, the secret kind of its value, a plain name even
    inside a credential container)."""
    lowered = key.lower()
    return (
        lowered in _CREDENTIAL_CONTAINERS,
        sensitive_kind(key),
        lowered in _CONTAINER_PLAIN_KEYS or is_metadata_name(key),
    )


def _is_helm_release_record(obj: dict[str, Any]) -> bool:
    """A Helm release kept in a ConfigMap (the configmap storage driver)."""
    if obj.get("kind") != "ConfigMap":
        return False
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return (
        isinstance(labels, dict)
        and labels.get("owner") == "helm"
        and isinstance(obj.get("data"), dict)
    )


def _may_hold_document(text: str) -> bool:
    # Most strings are a name, a timestamp or a label value: no document fits in them.
    return len(text) >= 8 and ("\n" in text or "{" in text or "[" in text)


def _names_a_secret(text: str) -> bool:
    # A document is parsed only if a sensitive name may be in it (names.py keeps the one
    # list); one search per keyword in the lowered text, as a case-insensitive alternation is
    # ten times slower on a large document.
    lowered = text.lower()
    return any(k in lowered for k in DOCUMENT_KEYWORDS)


def _parse_document(text: str) -> Any | None:
    if not _may_hold_document(text):
        return None
    stripped = text.strip()
    if len(stripped) < 8 or not _names_a_secret(stripped):
        return None
    if stripped[0] in "{[" and stripped[-1] in "}]":
        try:
            doc = json.loads(stripped)
        except ValueError:
            doc = None
        if isinstance(doc, (dict, list)):
            return doc
    if "\n" in stripped and ":" in stripped:
        try:
            doc = yaml.load(stripped, Loader=_YamlLoader)
        except yaml.YAMLError:
            return None
        if isinstance(doc, (dict, list)):
            return doc
    return None


# --- JSON documents on their own lines (JSON-lines logs): only lines holding a sensitive-name
# keyword are parsed; the values found are replaced where they occur in the line.
def json_line_hits(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    for start, end in scan.keyword_lines():
        line = text[start:end]
        stripped = line.strip()
        if not (stripped.startswith("{") and stripped.endswith("}")):
            continue
        try:
            doc = json.loads(stripped)
        except ValueError:
            continue
        for kind, value in Structured.values_of(doc):
            # As it is written inside the line: JSON-escaped, without the quotes.
            written = json.dumps(value, ensure_ascii=False)[1:-1]
            at = line.find(written)
            while at != -1:
                span = (start + at, start + at + len(written))
                hits.append(Hit(*span, kind, 1, value=value if written != value else None))
                at = line.find(written, at + len(written))
    return hits


JSON_LINES = Finder("json-lines", json_line_hits)
