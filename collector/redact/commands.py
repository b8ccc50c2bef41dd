"""Credentials on command lines (`ps` output, logs, container args, shell history, Dockerfiles)
in the forms whose flag does not say "password" itself, which pairs.py reads from the name:

- mysql's password glued to its flag: `mysql -uroot -pS3cret db` (`-p` alone prompts);
- a short flag with the value after a space, on the commands where that flag is the
  password: `redis-cli -a S3cret`, `sshpass -p S3cret`, `docker login -p S3cret`;
- `user:password` after curl's `-u`/`--user`;
- a secret echoed into `docker login --password-stdin` (also podman, helm registry, nerdctl);
- a flag and its value as two items of a YAML list (`- --token` then `- value`).

Each form is tied to its command on the same line, so that `-p 8080` (a port) and
`-a` (all) elsewhere stay as they are.
"""

from __future__ import annotations

import re

from .names import is_placeholder_value, sensitive_kind
from .patterns import refine_kind
from .scan import Finder, Scan
from .spans import Hit

_VALUE = r"""(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'|;&<>]+))"""
_MYSQL = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb)\b")
_GLUED_P = re.compile(r"(?<=[ \t])-p" + _VALUE)
_SHORT_FLAG = re.compile(
    r"\b(?:redis-cli\b[^\n]*?[ \t]-a|sshpass\b[^\n]*?[ \t]-p|"
    r"(?:docker|podman|nerdctl|buildah|skopeo|oras)\b[^\n|]*?\blogin\b[^\n|]*?[ \t]-p)"
    r"[ \t]+" + _VALUE
)
_USER_FLAG = re.compile(r"(?:^|[ \t])(?:-u|--user)(?:[ \t]+|=)([^\s:'\"]+):" + _VALUE)
_STDIN = re.compile(
    r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:(['\"])%s(?:\\n)?\1[ \t]+)?"
    + _VALUE
    + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?[^\n|]*?\blogin\b[^\n|]*?--password-stdin"
)
_LIST_FLAG = re.compile(r"(?m)^([ \t]*)- (--?[A-Za-z][A-Za-z0-9_.-]*)[ \t]*\r?\n\1- " + _VALUE)


def _commands(scan: Scan) -> list[Hit]:
    text, lower = scan.text, scan.lower
    hits: list[Hit] = []
    if "-p" in text and _MYSQL.search(lower):
        for line_start, line in _lines_with(text, _MYSQL, lower):
            for m in _GLUED_P.finditer(line):
                _add(scan, hits, "password", m, line_start)
    for m in _SHORT_FLAG.finditer(text):
        _add(scan, hits, "password", m, 0)
    if "-u" in text:
        for m in _USER_FLAG.finditer(text):
            _add(scan, hits, "password", m, 0, first=2)
    if "-stdin" in text:
        for m in _STDIN.finditer(text):
            _add(scan, hits, "password", m, 0, first=2)
    if "- -" in text:
        for m in _LIST_FLAG.finditer(text):
            kind = sensitive_kind(m.group(2))
            if kind is not None:
                _add(scan, hits, kind, m, 0, first=3)
    return hits


def _lines_with(text: str, pattern: re.Pattern[str], lower: str) -> list[tuple[int, str]]:
    out = []
    for m in pattern.finditer(lower):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        out.append((start, text[start : len(text) if end == -1 else end]))
    return out


def _add(
    scan: Scan, hits: list[Hit], kind: str, m: re.Match[str], offset: int, *, first: int = 1
) -> None:
    group = next((g for g in range(first, first + 3) if m.group(g) is not None), None)
    if group is None:
        return
    value = m.group(group)
    if not value or is_placeholder_value(value) or value.startswith(("/", "-")):
        return
    kind = refine_kind(kind, value)
    start = offset + m.start(group)
    hits.append(Hit(start, start + len(value), kind, scan.pseudonyms.secret(kind, value), 1))


FINDERS: tuple[Finder, ...] = (Finder("command-lines", _commands),)
