"""Loading rules: one YAML file per rule, discovered from a directory, validated strictly.

Every CEL expression is compiled and every text template parsed at load time, so a broken
rule stops the run with a message naming its file and field instead of failing later.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import yaml
from jinja2 import meta as jinja_meta
from jinja2 import nodes as jinja_nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

import tf_support_schemas as schemas

from . import cel
from .errors import RuleLoadError
from .functions import FUNCTIONS
from .manual import load_manual

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LANGS = ("en", "zh")
TEXT_FIELDS = ("title", "explanation", "fix")
# Names every expression and template may use besides the rule's own.
GLOBAL_NAMES = frozenset({"tf"})

TEMPLATES = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False
)


class Text:
    """A rule's text or command template, checked when the rule loads and compiled when a
    finding first renders it: most rules never fire, and compiling all ~600 templates was
    most of the time rules took to load. Text with no Jinja markup is itself."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._template: jinja2.Template | None = None

    def render(self, context: dict[str, Any]) -> str:
        if "{" not in self.source:
            return self.source
        if self._plain is not None:
            text = _render_plain(self._plain, context)
            if text is not None:
                return text
        if self._template is None:
            self._template = TEMPLATES.from_string(self.source)
        return self._template.render(context)

    @functools.cached_property
    def _plain(self) -> list[tuple[str, str, tuple[str, ...]]] | None:
        return _plain_parts(self.source)


@dataclass(frozen=True)
class Expr:
    """A compiled CEL expression and where it came from (for error messages)."""

    where: str
    source: str
    program: cel.Program


@dataclass(frozen=True)
class Rule:
    id: str
    path: str
    manual: tuple[str, ...]
    severity: str
    section: str
    texts: dict[str, dict[str, Text]]  # field -> lang -> template
    commands: tuple[Text, ...]
    for_each: dict[str, Any] | None
    bindings: dict[str, dict[str, Any]]
    when: Expr
    evidence: tuple[Expr, ...]
    vars: dict[str, Expr]
    consequence_of: tuple[str, ...]
    # binding name -> (key, value expression) pairs selecting that binding's objects per subject
    where: dict[str, tuple[tuple[str, Expr], ...]] = field(default_factory=dict)
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def subject(self) -> str | None:
        return self.for_each["as"] if self.for_each else None


def default_rules_dir() -> Path:
    return Path(str(resources.files("tf_support_rules")))


def load_rules(directory: Path | None = None) -> list[Rule]:
    """Every rule under `directory` (default: the shipped rules), sorted by id."""
    root = directory or default_rules_dir()
    if not root.is_dir():
        raise RuleLoadError(f"rules directory {root} does not exist")
    files = sorted(
        p
        for p in root.rglob("*.yaml")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )
    if not files:
        raise RuleLoadError(f"no rules (*.yaml) found in {root}")
    rules = [load_rule(p, root) for p in files]
    ids = [r.id for r in rules]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise RuleLoadError(f"duplicate rule ids: {', '.join(dupes)}")
    return sorted(rules, key=lambda r: r.id)


def load_rule(path: Path, root: Path) -> Rule:
    rel = path.relative_to(root).as_posix()
    try:
        data = yaml.load(path.read_text("utf-8"), Loader=Loader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RuleLoadError(f"{rel}: not valid YAML: {_first_line(exc)}") from exc
    problems = schemas.errors("rule", data)
    if problems:
        raise RuleLoadError(f"{rel}: {problems[0]}")
    expected_id = rel.removesuffix(".yaml")
    if data["id"] != expected_id:
        raise RuleLoadError(f"{rel}: id: {data['id']!r} must match the file name ({expected_id!r})")
    manual = load_manual()
    for key in data["manual"]:
        if key not in manual.rows:
            raise RuleLoadError(f"{rel}: manual: unknown manual row key {key!r}")
    for key in data.get("consequence_of", []):
        if key not in manual.rows and key not in manual.sections:
            raise RuleLoadError(f"{rel}: consequence_of: unknown manual key or section {key!r}")

    for_each = data.get("for_each")
    bindings = data.get("with", {})
    scope = set(GLOBAL_NAMES) | set(bindings)
    if for_each:
        scope.add(for_each["as"])
    subject = (for_each or {}).get("as")
    for name, binding in bindings.items():
        target = binding.get("logs") or binding.get("events_for") or binding.get("exec")
        if target is None or target == subject:
            continue
        picked = bindings.get(target) or {}
        # Logs may also come from the pods a `where` binding picks for each subject.
        if "logs" in binding and picked.get("objects") == "pods" and "where" in picked:
            continue
        raise RuleLoadError(
            f"{rel}: with.{name}: {target!r} is not the for_each subject"
            + (" nor a binding of pods with `where`" if "logs" in binding else "")
        )

    where = {}
    for name, binding in bindings.items():
        if "where" not in binding:
            continue
        if not for_each:
            raise RuleLoadError(f"{rel}: with.{name}.where: needs a for_each subject")
        subject_scope = set(GLOBAL_NAMES) | {for_each["as"]}
        where[name] = tuple(
            (key, _compile(rel, f"with.{name}.where.{key}", src, subject_scope))
            for key, src in binding["where"].items()
        )

    when = _compile(rel, "when", data["when"], scope)
    evidence = tuple(
        _compile(rel, f"evidence[{i}]", src, scope)
        for i, src in enumerate(data.get("evidence", []))
    )
    rule_vars = {k: _compile(rel, f"vars.{k}", v, scope) for k, v in data.get("vars", {}).items()}
    template_names = set(rule_vars) | GLOBAL_NAMES | {"object"}
    texts = {
        fld: {
            lang: _template(rel, f"{fld}.{lang}", data[fld][lang], template_names) for lang in LANGS
        }
        for fld in TEXT_FIELDS
    }
    commands = tuple(
        _template(rel, f"commands[{i}]", c, template_names)
        for i, c in enumerate(data.get("commands", []))
    )
    return Rule(
        id=data["id"],
        path=rel,
        manual=tuple(data["manual"]),
        severity=data["severity"],
        section=manual.rows[data["manual"][0]].section,
        texts=texts,
        commands=commands,
        for_each=for_each,
        bindings=bindings,
        when=when,
        evidence=evidence,
        vars=rule_vars,
        consequence_of=tuple(data.get("consequence_of", [])),
        where=where,
        raw=data,
    )


def _compile(rel: str, where: str, source: str, scope: set[str]) -> Expr:
    try:
        program = cel.compile(source, FUNCTIONS)
    except (cel.CelSyntaxError, cel.CelCompileError) as exc:
        raise RuleLoadError(f"{rel}: {where}: invalid CEL: {_first_line(exc)}") from exc
    expr = Expr(where=where, source=source, program=program)
    unknown = sorted(program.variables - scope)
    if unknown:
        raise RuleLoadError(f"{rel}: {where}: unknown name(s) {', '.join(unknown)}")
    return expr


def _template(rel: str, where: str, source: str, names: set[str]) -> Text:
    if "{" not in source:
        return Text(source)
    used = _plain_variables(source)
    if used is None:
        try:
            parsed = TEMPLATES.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise RuleLoadError(f"{rel}: {where}: invalid template: {exc.message}") from exc
        used = _variables(parsed)
    unknown = sorted(used - names)
    if unknown:
        raise RuleLoadError(f"{rel}: {where}: unknown template variable(s) {', '.join(unknown)}")
    return Text(source)


# Checking ~470 templates with Jinja's parser and its undeclared-variable finder (which runs
# the whole code generator) was half of the time rules took to load. Most templates only
# print variables: their names are read off directly. Anything else goes to Jinja.
_TAG = re.compile(r"\{[{%#]")  # what opens a Jinja tag, comment or statement
_PLAIN_TAG = re.compile(r"\{\{\s*([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*\s*\}\}", re.ASCII)
# Names that are not plain variables to Jinja: constants, an operator, the template itself.
_NOT_PLAIN = frozenset({"true", "false", "none", "True", "False", "None", "not", "self"})


def _plain_variables(source: str) -> set[str] | None:
    """The variables of a template whose every tag is `{{ name }}` or `{{ name.attr... }}`
    (what Jinja would find undeclared in it), or None for any other template."""
    found: set[str] = set()
    pos = 0
    while (tag := _TAG.search(source, pos)) is not None:
        plain = _PLAIN_TAG.match(source, tag.start())
        if plain is None:
            return None
        found.add(plain.group(1))
        pos = plain.end()
    if found & _NOT_PLAIN or not found.isdisjoint(TEMPLATES.globals):
        return None
    return found


def _plain_parts(source: str) -> list[tuple[str, str, tuple[str, ...]]] | None:
    """A template of `{{ name.attr... }}` tags only, as (text before, name, attrs) and a last
    ("", "", ()) for the text after; None for any other template, or one whose text Jinja
    would change (its newlines, the one it drops at the end)."""
    if _plain_variables(source) is None or "\r" in source:
        return None
    parts: list[tuple[str, str, tuple[str, ...]]] = []
    pos = 0
    while (tag := _PLAIN_TAG.search(source, pos)) is not None:
        name, *attrs = tag.group(0)[2:-2].strip().split(".")
        parts.append((source[pos : tag.start()], name, tuple(attrs)))
        pos = tag.end()
    rest = source[pos:]
    parts.append((rest[:-1] if rest.endswith("\n") else rest, "", ()))
    return parts


def _render_plain(
    parts: list[tuple[str, str, tuple[str, ...]]], context: dict[str, Any]
) -> str | None:
    """A plain template rendered as Jinja renders it, without compiling it (most findings'
    texts are such); None where only Jinja can say (a name it lacks, a value not a map)."""
    out = []
    for text, name, attrs in parts:
        out.append(text)
        if not name:
            continue
        if name not in context:
            return None  # Jinja's StrictUndefined says what is missing
        value = context[name]
        for attr in attrs:
            # Jinja's sandbox reads an attribute before an item: a map's own methods differ.
            if type(value) is not dict or hasattr(dict, attr) or attr not in value:
                return None
            value = value[attr]
        out.append(str(value))
    return "".join(out)


# The nodes of conditions and printed expressions: in a template made of these alone every
# name is a variable read from the context, so a walk finds what the code generator finds.
_EXPRESSION_NODES = frozenset(
    {jinja_nodes.Template, jinja_nodes.Output, jinja_nodes.TemplateData, jinja_nodes.If}
    | {jinja_nodes.Name, jinja_nodes.Const, jinja_nodes.List, jinja_nodes.Getattr}
    | {jinja_nodes.Getitem, jinja_nodes.Filter, jinja_nodes.Compare, jinja_nodes.Operand}
    | {jinja_nodes.And, jinja_nodes.Or, jinja_nodes.Not, jinja_nodes.CondExpr}
    | {jinja_nodes.Add, jinja_nodes.Neg}
)


def _variables(parsed: jinja_nodes.Template) -> set[str]:
    """What `jinja_meta.find_undeclared_variables` answers, without the code generator where
    the template holds no loop, assignment, block or call. An unknown filter goes to the
    code generator too: outside an `if` it refuses the template, and that must not change."""
    found: set[str] = set()
    for node in parsed.find_all(jinja_nodes.Node):
        kind = type(node)
        if kind not in _EXPRESSION_NODES or (
            kind is jinja_nodes.Filter and node.name not in TEMPLATES.filters
        ):
            return jinja_meta.find_undeclared_variables(parsed)
        if kind is jinja_nodes.Name:
            found.add(node.name)
    if "self" in found:
        return jinja_meta.find_undeclared_variables(parsed)
    return {name for name in found if name not in TEMPLATES.globals}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
