"""Credentials on command lines (`ps` output, logs, container args, shell history, Dockerfiles)
in the forms whose flag does not say "password" itself, which pairs.py reads from the name:

- mysql's password glued to its flag: `mysql -uroot -pS3cret db` (`-p` alone prompts);
- a short flag with the value after a space, on the commands where that flag is the
  password: `redis-cli -a S3cret`, `sshpass -p S3cret`, `docker login -p S3cret`;
- `user:password` after curl's `-u`/`--user`;
- a secret echoed into `docker login --password-stdin` (also podman, helm registry, nerdctl),
  or given to it as a here-string (`docker login -u me --password-stdin <<< "S3cret"`);
- a flag and its value as two items of a YAML list (`- --token` then `- value`);
- a setting and its value after `config set` (`aws configure set aws_secret_access_key X`,
  `npm config set //registry/:_authToken X`, redis's `CONFIG SET requirepass X`).

Each form is tied to its command on the same line, so that `-p 8080` (a port) and
`-a` (all) elsewhere stay as they are.
"""

from __future__ import annotations

import re
from itertools import pairwise

from .names import is_placeholder_value, sensitive_kind
from .patterns import refine_kind
from .prose import strongly_generated
from .scan import Finder, Scan
from .spans import Hit

_VALUE = r"""(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'|;&<>\\]+))"""
# Each form is searched only on the lines holding its command word: a regex that starts with
# an alternation is tried at every position of the text, a substring search is not.
_MYSQL_WORDS = ("mysql", "mariadb")
_GLUED_P = re.compile(r"(?<=[ \t])-p" + _VALUE)
_SHORT_FLAGS = {
    "redis-cli": re.compile(r"redis-cli\b.*?[ \t]-a[ \t]+" + _VALUE),
    "sshpass": re.compile(r"sshpass\b.*?[ \t]-p[ \t]+" + _VALUE),
    "login": re.compile(
        r"(?:docker|podman|nerdctl|buildah|skopeo|oras)\b[^|]*?\blogin\b[^|]*?[ \t]-p[ \t]+"
        + _VALUE
    ),
}
_USER_FLAG = re.compile(r"(?:-u|--user)(?:[ \t]+|=)([^\s:'\"]+):" + _VALUE)
_STDIN = re.compile(
    r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:(['\"])%s(?:\\n)?\1[ \t]+)?"
    + _VALUE
    + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?[^|]*?\blogin\b[^|]*?--password-stdin"
)
_HERE_STRING = re.compile(r"\blogin\b[^|]*?--password-stdin\b[^|<]*<<<[ \t]*" + _VALUE)
# `aws configure set aws_secret_access_key X`, `npm config set //host/:_authToken X`,
# redis's `CONFIG SET requirepass X`: a name and its value as two words after `set`.
_CONFIG_SET = re.compile(r"(?i)\bconfig(?:ure)?[ \t]+set[ \t]+")
_ARGUMENT = re.compile(_VALUE)
# A JVM system property named `login` holds a token in SonarQube's scanner
# (`-Dsonar.login=squ_...`) and others: taken when it looks generated, as a user name does not.
_JVM_LOGIN = re.compile(r"(?<![\w-])-D[\w.-]*\.login=([^\s\"'|;&<>\\]+)")
_LIST_FLAG = re.compile(r"([ \t]*)- (--?[A-Za-z][A-Za-z0-9_.-]*)[ \t]*\r?\n\1- " + _VALUE)
# Every form above holds one of these: `-p`, `-a`, `-u` or `--` after a blank,
# `--password-stdin`, or `- -`. One search for them spares most texts the ten searches below.
_ANY_FORM = re.compile(r"-(?:(?<=[ \t]-)[pau-]|-password-stdin|(?<=- -))")


def _commands(scan: Scan) -> list[Hit]:
    text, lower = scan.text, scan.lower
    hits: list[Hit] = []
    if "config" in lower:
        for start, line in _lines_with(text, lower, ("config",)):
            for m in _CONFIG_SET.finditer(line):
                _config_value(scan, hits, line, m.end(), start)
    if ".login=" in text:
        for m in _JVM_LOGIN.finditer(text):
            if strongly_generated(m.group(1)):
                hits.append(Hit(m.start(1), m.end(1), "token", 1))
    if _ANY_FORM.search(text) is None:
        return hits
    if any(word in lower for word in _MYSQL_WORDS):
        for start, line in _lines_with(text, lower, _MYSQL_WORDS):
            for m in _GLUED_P.finditer(line):
                _add(scan, hits, "password", m, start)
    for word, pattern in _SHORT_FLAGS.items():
        if word in text:
            for start, line in _lines_with(text, text, (word,)):
                for m in pattern.finditer(line):
                    _add(scan, hits, "password", m, start)
    for needle in (" -u", "\t-u", " --user"):
        pos = text.find(needle)
        while pos != -1:
            m = _USER_FLAG.match(text, pos + 1)
            if m is not None:
                _add(scan, hits, "password", m, 0, first=2)
            pos = text.find(needle, pos + 1)
    if "--password-stdin" in text:
        for start, line in _lines_with(text, text, ("--password-stdin",)):
            for m in _STDIN.finditer(line):
                _add(scan, hits, "password", m, start, first=2)
            for m in _HERE_STRING.finditer(line):
                _add(scan, hits, "password", m, start)
    pos = text.find("- -")
    while pos != -1:
        line_start = text.rfind("\n", 0, pos) + 1
        m = _LIST_FLAG.match(text, line_start)
        if m is not None and (kind := sensitive_kind(m.group(2))) is not None:
            _add(scan, hits, kind, m, 0, first=3)
        pos = text.find("- -", pos + 3)
    return hits


def _config_value(scan: Scan, hits: list[Hit], line: str, pos: int, offset: int) -> None:
    """The word after the first sensitive setting name among the arguments of `config set`
    (flags such as `--profile prod` may come first)."""
    args = []
    while (pos := _skip_blanks(line, pos)) < len(line):
        m = _ARGUMENT.match(line, pos)
        if m is None:
            break  # the quote that closes a JSON message, a pipe: the arguments end here
        args.append(m)
        pos = m.end()
    for name, value in pairwise(args):
        word = name.group()
        if not word.startswith("-") and (kind := sensitive_kind(word.strip("\"'"))) is not None:
            _add(scan, hits, kind, value, offset)
            return


def _skip_blanks(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos


def _lines_with(text: str, hay: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    """(offset, line) of every line of `text` that holds one of `words` (searched in `hay`,
    the text or its lowered copy)."""
    out: dict[int, str] = {}
    for word in words:
        pos = hay.find(word)
        while pos != -1:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            out.setdefault(start, text[start:end])
            pos = hay.find(word, end)
    return sorted(out.items())


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
    hits.append(Hit(start, start + len(value), kind, 1))


FINDERS: tuple[Finder, ...] = (Finder("command-lines", _commands),)
