"""Label and field selectors with the syntax and semantics of the Kubernetes API.

Pure functions over plain dicts, shared by the emulator (query parameters) and the analyzer's
rules (objects by kind and selector):

    parse_label_selector("app=x,tier in (a,b),!legacy").matches(labels)
    parse_field_selector("status.phase!=Running,spec.nodeName=n1").matches(obj)
    label_selector_from_dict(deployment["spec"]["selector"]).matches(pod_labels)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class SelectorError(ValueError):
    """A selector that does not parse; the message says where and why."""


# --- label selectors -------------------------------------------------------------------------

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(f"^{_NAME}$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

EQUALS, NOT_EQUALS, IN, NOT_IN, EXISTS, NOT_EXISTS, GT, LT = (
    "=",
    "!=",
    "in",
    "notin",
    "exists",
    "!",
    "gt",
    "lt",
)


def _validate_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        raise SelectorError(f"invalid label key {key!r}: prefix part must be non-empty")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise SelectorError(f"invalid label key {key!r}: prefix must be a DNS subdomain")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise SelectorError(
            f"invalid label key {key!r}: name part must be 1-63 alphanumeric characters, "
            "'-', '_' or '.', starting and ending with an alphanumeric character"
        )


def _validate_value(value: str) -> None:
    if value and (len(value) > 63 or not _NAME_RE.match(value)):
        raise SelectorError(
            f"invalid label value {value!r}: must be empty or 1-63 alphanumeric characters, "
            "'-', '_' or '.', starting and ending with an alphanumeric character"
        )


@dataclass(frozen=True)
class Requirement:
    """One term of a label selector: key, operator and values (sorted)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator in (EQUALS, IN):
            return present and value in self.values
        if self.operator in (NOT_EQUALS, NOT_IN):
            return not present or value not in self.values
        if self.operator == EXISTS:
            return present
        if self.operator == NOT_EXISTS:
            return not present
        # gt / lt compare integers; a label that is not an integer never matches
        try:
            have, want = int(str(value)), int(self.values[0])
        except ValueError:
            return False
        return present and (have > want if self.operator == GT else have < want)

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == NOT_EXISTS:
            return f"!{self.key}"
        if self.operator in (IN, NOT_IN):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {GT: ">", LT: "<"}.get(self.operator, self.operator)
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class LabelSelector:
    """All requirements (sorted by key) must match; an empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        # Like labels.Selector.String(): requirements sorted by key, comma-joined.
        return ",".join(str(r) for r in self.requirements)


_TOKEN_RE = re.compile(r"\s*(==|!=|=|!|\(|\)|,|>|<|[^\s=!(),<>]+)")


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any non-space character
            raise SelectorError(f"unable to parse requirement: {text[pos:]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise SelectorError(f"unexpected end of selector {self.text!r}")
        self.pos += 1
        return tok

    def fail(self, what: str, found: str | None) -> SelectorError:
        where = f"found {found!r}" if found is not None else "found end of input"
        return SelectorError(f"invalid label selector {self.text!r}: {what}, {where}")

    def parse(self) -> LabelSelector:
        reqs: list[Requirement] = []
        while self.peek() is not None:
            reqs.append(self.requirement())
            tok = self.peek()
            if tok is None:
                break
            if tok != ",":
                raise self.fail("expected ',' between requirements", tok)
            self.take()
            if self.peek() is None:
                raise self.fail("expected a requirement after ','", None)
        # Sorted by key like labels.Parse, so equal selectors compare and print equal.
        return LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))

    def key(self) -> str:
        tok = self.take()
        if tok in ("==", "!=", "=", "!", "(", ")", ",", ">", "<"):
            raise self.fail("expected a label key", tok)
        _validate_key(tok)
        return tok

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return Requirement(self.key(), NOT_EXISTS)
        key = self.key()
        op = self.peek()
        if op is None or op == ",":
            return Requirement(key, EXISTS)
        self.take()
        if op in ("=", "==", "!="):
            return Requirement(key, NOT_EQUALS if op == "!=" else EQUALS, (self.value(),))
        if op in (">", "<"):
            value = self.take()
            if not re.fullmatch(r"-?\d+", value):
                raise self.fail(f"'{op}' needs an integer value", value)
            return Requirement(key, GT if op == ">" else LT, (value,))
        if op in ("in", "notin"):
            return Requirement(key, IN if op == "in" else NOT_IN, self.value_set())
        raise self.fail(f"expected an operator (=, ==, !=, in, notin) after {key!r}", op)

    def value(self) -> str:
        tok = self.peek()
        if tok is None or tok in (",", ")"):
            return ""  # `key=` selects the empty value, as the API does
        if tok in ("==", "!=", "=", "!", "(", ">", "<"):
            raise self.fail("expected a label value", tok)
        self.take()
        _validate_value(tok)
        return tok

    def value_set(self) -> tuple[str, ...]:
        tok = self.take()
        if tok != "(":
            raise self.fail("expected '(' to open the value set", tok)
        values: set[str] = set()
        if self.peek() == ")":
            self.take()
            return ("",)  # `key in ()` means the empty value, like labels.Parse
        while True:
            values.add(self.value())
            tok = self.take()
            if tok == ")":
                return tuple(sorted(values))
            if tok != ",":
                raise self.fail("expected ',' or ')' in the value set", tok)


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a label selector string as the API server does (`labelSelector=`)."""
    if text is None or not text.strip():
        return LabelSelector()
    return _LabelParser(text).parse()


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (`matchLabels`, `matchExpressions`) as a LabelSelector.

    Like LabelSelectorAsSelector, an empty selector matches everything.
    """
    if not selector:
        return LabelSelector()
    reqs = [
        Requirement(str(k), EQUALS, (str(v),))
        for k, v in (selector.get("matchLabels") or {}).items()
    ]
    operators = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": NOT_EXISTS}
    for expr in selector.get("matchExpressions") or []:
        op = operators.get(expr.get("operator", ""))
        if op is None:
            raise SelectorError(f"{expr.get('operator')!r} is not a valid label selector operator")
        values = tuple(sorted(str(v) for v in expr.get("values") or ()))
        if op in (IN, NOT_IN) and not values:
            raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty: {expr}")
        reqs.append(Requirement(str(expr.get("key", "")), op, values if op in (IN, NOT_IN) else ()))
    return LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))


def format_labels(labels: Mapping[str, str] | None) -> str:
    """labels.FormatLabels: `k=v,k2=v2` sorted by key, or `<none>`."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


# --- field selectors -------------------------------------------------------------------------

_COMMON_FIELDS = {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}

_EVENT_FIELDS = {
    "involvedObject.kind": "involvedObject.kind",
    "involvedObject.namespace": "involvedObject.namespace",
    "involvedObject.name": "involvedObject.name",
    "involvedObject.uid": "involvedObject.uid",
    "involvedObject.apiVersion": "involvedObject.apiVersion",
    "involvedObject.resourceVersion": "involvedObject.resourceVersion",
    "involvedObject.fieldPath": "involvedObject.fieldPath",
    "reason": "reason",
    "reportingComponent": "reportingComponent",
    "source": "source.component",
    "type": "type",
}

# The same events seen through events.k8s.io/v1 keep the core field names working.
_EVENTS_V1_FIELDS = {
    **{k: v.replace("involvedObject.", "regarding.") for k, v in _EVENT_FIELDS.items()},
    **{
        f"regarding.{k.split('.', 1)[1]}": v.replace("involvedObject.", "regarding.")
        for k, v in _EVENT_FIELDS.items()
        if k.startswith("involvedObject.")
    },
    "reportingComponent": "reportingController",
    "reportingController": "reportingController",
    "source": "deprecatedSource.component",
}

# Selectable fields per (group, resource), as the real API registers them: field -> object path.
FIELDS: dict[tuple[str, str], dict[str, str]] = {
    ("", "pods"): {
        "spec.nodeName": "spec.nodeName",
        "spec.restartPolicy": "spec.restartPolicy",
        "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName",
        "spec.hostNetwork": "spec.hostNetwork",
        "status.phase": "status.phase",
        "status.podIP": "status.podIP",
        "status.nominatedNodeName": "status.nominatedNodeName",
    },
    ("", "nodes"): {"spec.unschedulable": "spec.unschedulable"},
    ("", "namespaces"): {"status.phase": "status.phase"},
    ("", "secrets"): {"type": "type"},
    ("", "events"): _EVENT_FIELDS,
    ("events.k8s.io", "events"): _EVENTS_V1_FIELDS,
    ("apps", "replicasets"): {"status.replicas": "status.replicas"},
    ("batch", "jobs"): {"status.successful": "status.succeeded"},
    ("", "persistentvolumeclaims"): {},
}


def supported_fields(group: str, resource: str) -> dict[str, str]:
    """Field selector names the API accepts for a resource, mapped to object paths."""
    return {**_COMMON_FIELDS, **FIELDS.get((group, resource), {})}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    operator: str  # "=" or "!="
    value: str

    def __str__(self) -> str:
        escaped = re.sub(r"([\\,=])", r"\\\1", self.value)
        return f"{self.field}{self.operator}{escaped}"


def field_value(obj: Any, path: str) -> str:
    """The field's value as the API compares it: a string, "" when absent."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return ""
        cur = cur[part]
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(r.field for r in self.requirements)

    def matches(self, obj: Mapping[str, Any], paths: Mapping[str, str] | None = None) -> bool:
        """True if every term holds; `paths` maps selector fields to object paths."""
        for req in self.requirements:
            have = field_value(obj, (paths or {}).get(req.field, req.field))
            if (have == req.value) != (req.operator == "="):
                return False
        return True

    def check_supported(self, supported: Iterable[str]) -> None:
        """Raise SelectorError worded like the API for a field it cannot select on."""
        allowed = set(supported)
        for req in self.requirements:
            if req.field not in allowed:
                raise SelectorError(f"field label not supported: {req.field}")

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur.append(text[i : i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(value: str, term: str) -> str:
    out, i = [], 0
    while i < len(value):
        ch = value[i]
        if ch == "\\":
            nxt = value[i + 1 : i + 2]
            if nxt not in ("\\", ",", "="):
                raise SelectorError(f"invalid field selector {term!r}: invalid escape sequence")
            out.append(nxt)
            i += 2
            continue
        if ch in ",=":
            raise SelectorError(f"invalid field selector {term!r}: unescaped {ch!r} in value")
        out.append(ch)
        i += 1
    return "".join(out)


def _field_term(term: str) -> FieldRequirement:
    # Like fields.splitTerm: the leftmost operator wins, "!=" and "==" before "=".
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                field, value = term[:i].strip(), term[i + len(op) :]
                if not field:
                    raise SelectorError(f"invalid field selector {term!r}: empty field name")
                return FieldRequirement(field, "!=" if op == "!=" else "=", _unescape(value, term))
    raise SelectorError(f"invalid selector: {term!r}; can't understand {term!r}")


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse a field selector string as the API server does (`fieldSelector=`)."""
    if text is None or not text.strip():
        return FieldSelector()
    return FieldSelector(tuple(_field_term(t) for t in _split_unescaped(text, ",")))
