"""Kubernetes Secrets written out as YAML inside any text (`kubectl get secret -o
yaml` pasted into a log, a Helm manifest kept in a ConfigMap, a file redacted offline): every
value under `data:` and `stringData:` of a document of `kind: Secret` is a secret, whatever
its key is called. JSON Secrets are judged by structure (structured.py).

Also base64-encoded PEM certificates under keys that do not name a certificate authority:
a client or server certificate travels with its key; a CA bundle (`caBundle`, `ca.crt`) is
public and diagnostic, and stays.
"""

from __future__ import annotations

import re

from .names import is_placeholder_value
from .scan import Finder, Scan
from .spans import Hit

_KIND_SECRET = re.compile(r"(?m)^[ \t]*kind:[ \t]*[\"']?Secret[\"']?[ \t]*\r?$")
_DOC_BREAK = re.compile(r"(?m)^---")
_DATA = re.compile(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\r?$")
_ENTRY = re.compile(r"([ \t]+)[\"']?[A-Za-z0-9_.-]+[\"']?:[ \t]*(.*?)[ \t]*\r?$")
_BLOCK = re.compile(r"[|>][-+0-9]*")

# base64 of "-----BEGIN CERTIFICATE-----": the key on the same line decides.
_B64_CERT = re.compile(r"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t[A-Za-z0-9+/]*={0,2}")
_KEY_BEFORE = re.compile(r"([A-Za-z0-9_.-]+)[\"']?[ \t]*[:=][ \t]*[\"']?$")
_AUTHORITY = re.compile(r"(?i)(?:^|[._-])ca(?:$|[._-])|^ca[A-Z_]|cabundle|authority|trust|root")


def _secret_documents(scan: Scan) -> list[Hit]:
    text = scan.text
    hits: list[Hit] = []
    for kind in _KIND_SECRET.finditer(text):
        start = _last_break(text, kind.start())
        stop = _DOC_BREAK.search(text, kind.end())
        end = stop.start() if stop else len(text)
        for data in _DATA.finditer(text, start, end):
            _entries(scan, hits, data.end(), end, len(data.group(1)))
    return hits


def _last_break(text: str, pos: int) -> int:
    last = 0
    for m in _DOC_BREAK.finditer(text, 0, pos):
        last = m.end()
    return last


def _entries(scan: Scan, hits: list[Hit], pos: int, end: int, indent: int) -> None:
    """Each `key: value` (and block scalar) indented under `data:`, until the indent falls."""
    text = scan.text
    pos = text.find("\n", pos) + 1
    block_indent = -1
    while 0 < pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl == -1 else nl
        line = text[pos:line_end]
        depth = len(line) - len(line.lstrip(" \t"))
        if line.strip():
            if depth <= indent:
                return
            if block_indent != -1 and depth > block_indent:
                _add(scan, hits, pos + depth, line_end, text[pos + depth : line_end].rstrip())
            else:
                block_indent = -1
                m = _ENTRY.match(text, pos, line_end)
                if m is not None and m.group(2):
                    if _BLOCK.fullmatch(m.group(2)):
                        block_indent = depth
                    else:
                        _add(scan, hits, m.start(2), m.end(2), m.group(2))
        if nl == -1:
            return
        pos = nl + 1


def _add(scan: Scan, hits: list[Hit], start: int, end: int, value: str) -> None:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        start, end, value = start + 1, end - 1, value[1:-1]
    if is_placeholder_value(value):
        return
    end = start + len(value)
    hits.append(Hit(start, end, "secret", 1))


def _certificates(scan: Scan) -> list[Hit]:
    text, hits = scan.text, []
    for m in _B64_CERT.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        key = _KEY_BEFORE.search(text, line_start, m.start())
        if key is not None and not _AUTHORITY.search(key.group(1)):
            hits.append(Hit(m.start(), m.end(), "certificate", 1))
    return hits


FINDERS: tuple[Finder, ...] = (
    Finder("secret-yaml", _secret_documents, hints=("Secret",)),
    Finder("base64-certificates", _certificates, hints=("LS0tLS1CRUdJTiBDRVJU",)),
)
