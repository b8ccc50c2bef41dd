"""The Chinese text of every rule carries what the English one does, and the other way round:
for the title, the explanation and the fix of every rule, both languages

- read the same values: the same variables and fields (`{{ pool }}`, `object.name`, `tf.release`)
  in their expressions and conditions;
- choose between the same cases: the same `{% if %}` conditions, except those that only pick
  an English singular or plural (a length compared with 1);
- quote the same technical text: names with a dot, slash, colon, underscore or equals sign
  (`tensor-fusion.ai/gpu-model`, `controller.resources.limits.memory`, `key=value`), flags
  (`--reuse-values`), numbers, CamelCase names (`CrashLoopBackOff`, `TensorFusion`), and
  hyphenated or upper-case words the rule's own commands or expressions also spell
  (`docker-registry`, `toolkit-validation`, the MODEL column). English words such as
  "out-of-memory" or "VRAM" may be said in Chinese words (显存), and so may the names the
  manual says in Chinese (GPUPool: 资源池).

A rule's `commands` are one list for both languages, so they cannot differ.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from jinja2 import nodes

from analyzer.rules.loading import LANGS, TEMPLATES, TEXT_FIELDS, load_rules

RULES = {rule.id: rule for rule in load_rules()}
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
WORD = re.compile(r"(?<![\w.<-])-{0,2}[\w<*/][\w./:=*<>@+\[\]-]*", re.ASCII)
# Names the manual says in Chinese words (docs/manual/troubleshooting.zh.md).
TERMS = {"GPUPool": "资源池"}
PLURAL = re.compile(r"\|\s*length\s*(==|!=|>|<=)\s*1\b")


def variables_read(source: str) -> set[str]:
    """The variables and fields a template reads: `object.name`, `tf.release`, `pool`."""
    read: set[str] = set()
    tree = TEMPLATES.parse(source)
    bound = {n.name for n in tree.find_all(nodes.Name) if n.ctx != "load"} | {"loop"}
    for node in tree.find_all((nodes.Getattr, nodes.Name)):
        path = _path(node)
        if path and path.split(".")[0] not in bound:
            read.add(path)
    # Only the longest paths: `object.name` says `object` is read.
    return {p for p in read if not any(q.startswith(p + ".") for q in read)}


def _path(node: nodes.Node) -> str:
    if isinstance(node, nodes.Name) and node.ctx == "load":
        return node.name
    if isinstance(node, nodes.Getattr):
        inner = _path(node.node)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def conditions(source: str) -> set[str]:
    """The `{% if %}`/`{% elif %}` conditions, spaces normalised, English plurals left out."""
    found = set()
    for tag in re.findall(r"\{%-?\s*(?:if|elif)\s+(.*?)\s*-?%\}", source, re.S):
        if not PLURAL.search(tag):
            found.add(re.sub(r"\s+", " ", tag))
    return found


def technical(source: str, code_words: set[str]) -> set[str]:
    """The technical words of a text outside its Jinja markup (see the module docstring)."""
    found = set()
    for match in WORD.finditer(JINJA.sub(" ", source)):
        word = match.group(0).rstrip(".,:;)/")
        if _identifier(word):
            found.add(word)
        else:  # a slash joins words: "CPU/memory" says CPU
            found |= {w for w in {word, *word.split("/")} if w in code_words}
    return found


def _identifier(word: str) -> bool:
    if word in ("e.g", "i.e"):
        return False
    if re.search(r"\w[.:=_]\w|\d|<\w|^/\w", word) or re.match(r"-{1,2}[a-z]", word):
        return True  # a slash alone joins words ("labels/annotations"), not a path
    return any(  # CamelCase; GPUs, CRDs, remote-GPU, CPU/memory are plain words
        re.search(r"[a-z]", part)
        and re.search(r".[A-Z]", part)
        and not re.fullmatch(r"[A-Z]+s", part)
        for part in re.split(r"[/-]", word)
    )


def code_words(rule_id: str) -> set[str]:
    """The words a rule names in code that a text may quote: hyphenated words of its commands
    and expressions (`docker-registry`, `toolkit-validation`), and upper-case words of its
    commands (the MODEL column)."""
    rule = RULES[rule_id]
    code = dict(rule.raw)
    for field in (*TEXT_FIELDS, "scenarios", "manual", "id", "consequence_of", "yields_to"):
        code.pop(field, None)
    if "known_issue" in code:  # a known bug's name is text too
        code["known_issue"] = {k: v for k, v in code["known_issue"].items() if k != "name"}
    words = {w.strip(".-") for w in re.findall(r"[\w.-]+", yaml.safe_dump(code), re.ASCII)}
    hyphenated = {w for w in words if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", w)}
    commands = " ".join(c.source for c in rule.commands)
    upper = set(re.findall(r"\b[A-Z][A-Z_]+\b", commands))
    return hyphenated | upper


def _texts(rule_id: str, field: str) -> tuple[str, str]:
    rule = RULES[rule_id]
    return rule.texts[field]["en"].source, rule.texts[field]["zh"].source


CASES = [(rule_id, field) for rule_id in sorted(RULES) for field in TEXT_FIELDS]


@pytest.mark.parametrize(("rule_id", "field"), CASES)
def test_both_languages_read_the_same_values(rule_id: str, field: str) -> None:
    en, zh = _texts(rule_id, field)
    assert variables_read(zh) == variables_read(en)


@pytest.mark.parametrize(("rule_id", "field"), CASES)
def test_both_languages_choose_between_the_same_cases(rule_id: str, field: str) -> None:
    en, zh = _texts(rule_id, field)
    assert conditions(zh) == conditions(en)


@pytest.mark.parametrize(("rule_id", "field"), CASES)
def test_both_languages_quote_the_same_technical_text(rule_id: str, field: str) -> None:
    en, zh = _texts(rule_id, field)
    words = code_words(rule_id)
    in_en, in_zh = technical(en, words), technical(zh, words)
    in_zh |= {term for term, said in TERMS.items() if term in in_en and said in zh}
    assert in_zh == in_en


def test_the_comparisons_see_what_they_compare() -> None:
    words = {"docker-registry", "MODEL"}
    en = (
        "Create a docker-registry Secret, set imagePullSecrets[0].name={{ name }} and run "
        "helm upgrade --reuse-values; compare with MODEL. The 36 out-of-memory GPUs of "
        "{{ object.name }}{% if n | length > 1 %}s{% endif %}{% if pool %} in {{ pool }}{% endif %}."
    )
    assert technical(en, words) == {
        "docker-registry", "imagePullSecrets[0].name=", "--reuse-values", "MODEL", "36",
    }  # fmt: skip
    assert variables_read(en) == {"name", "object.name", "n", "pool"}
    assert conditions(en) == {"pool"}
    zh = "创建 Secret，运行 helm upgrade --reuse-values；{{ object.name }} 的 GPU 显存不足。"
    assert technical(zh, words) == {"--reuse-values"}
    assert variables_read(zh) == {"object.name"}


def test_commands_are_one_list_for_both_languages() -> None:
    assert LANGS == ("en", "zh")
    schema = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "schemas" / "rule.schema.json").read_text()
    )
    assert schema["properties"]["commands"]["items"]["type"] == "string"
