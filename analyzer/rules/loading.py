"""Loading rules: one YAML file per rule, discovered from a directory, validated strictly.

Every CEL expression is compiled and every text template parsed at load time, so a broken
rule stops the run with a message naming its file and field instead of failing later.
Functions several rules share are defined in CEL in `_functions.yaml` beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import yaml
from jinja2 import nodes as jinja_nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

import tf_support_schemas as schemas
from k8s.types import BUILTIN_TYPES
from tf_support_schemas.manual import Loader, Manual, load_manual

from ..errors import RuleLoadError
from ..i18n import LANGS
from . import cel
from .functions import FUNCTIONS
from .known import KnownIssue

TEXT_FIELDS = ("title", "explanation", "fix")
# Names every expression and template may use besides the rule's own.
GLOBAL_NAMES = frozenset({"tf"})
FUNCTIONS_FILE = "_functions.yaml"
KNOWN_ISSUES = "known-issues"  # the directory, id prefix and report section of known bugs

TEMPLATES = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False
)


class Text:
    """A rule's text or command template, checked when the rule loads and compiled when a
    finding first renders it (most rules never fire). Text with no Jinja markup is itself."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._template: jinja2.Template | None = None

    def render(self, context: dict[str, Any]) -> str:
        if "{" not in self.source:
            return self.source
        if self._template is None:
            self._template = TEMPLATES.from_string(self.source)
        return self._template.render(context)


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
    decisive: Expr | None  # the evidence line that decided it (None: the first evidence line)
    vars: dict[str, Expr]
    consequence_of: tuple[str, ...]
    yields_to: tuple[str, ...]  # a catch-all's finding gives way to these about its object
    # A generic row: its finding heads nothing and nests under a specific cause of what it is
    # about or depends on (analyzer/rules/subjects.py).
    generic: bool
    depends_on: tuple[str, ...]  # TensorFusion components its findings need working
    # binding name -> (key, value expression) pairs selecting that binding's objects per subject
    where: dict[str, tuple[tuple[str, Expr], ...]] = field(default_factory=dict)
    lets: dict[str, Expr] = field(default_factory=dict)  # in the file's order
    known: KnownIssue | None = None  # a known TensorFusion bug (rules/known-issues/)
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
    defined = load_functions(root)
    rules = [load_rule(p, root, defined) for p in files]
    ids = [r.id for r in rules]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise RuleLoadError(f"duplicate rule ids: {', '.join(dupes)}")
    return sorted(rules, key=lambda r: r.id)


def load_functions(root: Path) -> dict[str, cel.Function]:
    """The functions defined in `root/_functions.yaml` (none without the file), each checked:
    its body reads only its parameters and calls only functions defined before it."""
    path = root / FUNCTIONS_FILE
    if not path.is_file():
        return {}
    data = _read_yaml(path, FUNCTIONS_FILE)
    problem = schemas.first_error("functions", data)
    if problem:
        raise RuleLoadError(f"{FUNCTIONS_FILE}: {problem}")
    defined: dict[str, cel.Function] = {}
    for name, spec in data.items():
        if name in FUNCTIONS or name in cel.STANDARD_FUNCTIONS:
            raise RuleLoadError(f"{FUNCTIONS_FILE}: {name}: a built-in function has this name")
        try:
            defined[name] = cel.Function.define(
                name, tuple(spec["params"]), spec["expr"], FUNCTIONS, defined
            )
        except (cel.CelSyntaxError, cel.CelCompileError) as exc:
            raise RuleLoadError(f"{FUNCTIONS_FILE}: {name}: {_first_line(exc)}") from exc
    return defined


def load_rule(path: Path, root: Path, defined: dict[str, cel.Function] | None = None) -> Rule:
    rel = path.relative_to(root).as_posix()
    data = _read_yaml(path, rel)
    problem = schemas.first_error("rule", data)
    if problem:
        raise RuleLoadError(f"{rel}: {problem}")
    if data.get("yields_to") and not data.get("generic"):
        raise RuleLoadError(f"{rel}: yields_to: only a generic rule (generic: true) yields")
    expected_id = rel.removesuffix(".yaml")
    if data["id"] != expected_id:
        raise RuleLoadError(f"{rel}: id: {data['id']!r} must match the file name ({expected_id!r})")
    manual = load_manual()
    _check_manual_keys(rel, data, manual)
    if ("known_issue" in data) != data["id"].startswith(f"{KNOWN_ISSUES}/"):
        raise RuleLoadError(
            f"{rel}: known_issue: known bugs, and only they, live in {KNOWN_ISSUES}/"
        )

    for_each = data.get("for_each")
    bindings = data.get("with", {})
    subject = (for_each or {}).get("as")
    _check_targets(rel, bindings, subject)
    _check_resources(rel, for_each, bindings)
    compiler = _Compiler(rel, defined or {})

    where = {}
    for name, binding in bindings.items():
        if "where" not in binding:
            continue
        if not for_each:
            raise RuleLoadError(f"{rel}: with.{name}.where: needs a for_each subject")
        subject_scope = set(GLOBAL_NAMES) | {for_each["as"]}
        where[name] = tuple(
            (key, compiler.expr(f"with.{name}.where.{key}", src, subject_scope))
            for key, src in binding["where"].items()
        )

    scope = set(GLOBAL_NAMES) | set(bindings) | ({subject} if subject else set())
    lets = {}
    for name, src in data.get("let", {}).items():
        if name in scope:
            raise RuleLoadError(f"{rel}: let.{name}: the name is already bound")
        lets[name] = compiler.expr(f"let.{name}", src, scope)
        scope.add(name)

    when = compiler.expr("when", data["when"], scope)
    evidence = tuple(
        compiler.expr(f"evidence[{i}]", src, scope)
        for i, src in enumerate(data.get("evidence", []))
    )
    decisive = compiler.expr("decisive", data["decisive"], scope) if "decisive" in data else None
    rule_vars = {k: compiler.expr(f"vars.{k}", v, scope) for k, v in data.get("vars", {}).items()}
    template_names = set(rule_vars) | GLOBAL_NAMES | {"object"}
    if "known_issue" in data:
        template_names.add("known")  # rules/known.py: Citation.context
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
        manual=tuple(data.get("manual", ())),
        severity=data["severity"],
        section=manual.rows[data["manual"][0]].section if "manual" in data else KNOWN_ISSUES,
        texts=texts,
        commands=commands,
        for_each=for_each,
        bindings=bindings,
        when=when,
        evidence=evidence,
        decisive=decisive,
        vars=rule_vars,
        consequence_of=tuple(data.get("consequence_of", [])),
        yields_to=tuple(data.get("yields_to", [])),
        generic=bool(data.get("generic", False)),
        depends_on=tuple(data.get("depends_on", [])),
        where=where,
        lets=lets,
        known=KnownIssue.of(data["known_issue"]) if "known_issue" in data else None,
        raw=data,
    )


def _read_yaml(path: Path, rel: str) -> Any:
    try:
        return yaml.load(path.read_text("utf-8"), Loader=Loader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RuleLoadError(f"{rel}: not valid YAML: {_first_line(exc)}") from exc


def _check_manual_keys(rel: str, data: dict[str, Any], manual: Manual) -> None:
    for key in data.get("manual", []):
        if key not in manual.rows:
            raise RuleLoadError(f"{rel}: manual: unknown manual row key {key!r}")
    named = [("consequence_of", k) for k in data.get("consequence_of", [])]
    named += [("yields_to", k) for k in data.get("yields_to", [])]
    named += [("known_issue.explains", k) for k in data.get("known_issue", {}).get("explains", [])]
    for field_name, key in named:
        if key not in manual.rows and key not in manual.sections:
            raise RuleLoadError(f"{rel}: {field_name}: unknown manual key or section {key!r}")


# The core API group's resources: any other resource is named with its group ("deployments.apps"),
# else a rule would read a resource no bundle holds and see an empty list.
CORE_RESOURCES = frozenset(t.resource for t in BUILTIN_TYPES if t.group == "")


def _check_resources(rel: str, for_each: dict[str, Any] | None, bindings: dict[str, Any]) -> None:
    named = [("for_each.resource", (for_each or {}).get("resource"))]
    named += [(f"with.{n}.objects", b.get("objects")) for n, b in bindings.items()]
    for where, resource in named:
        if resource and "." not in resource and resource not in CORE_RESOURCES:
            raise RuleLoadError(
                f"{rel}: {where}: {resource!r} is not a core resource: name its API group "
                f"(e.g. {resource}.apps)"
            )


def _check_targets(rel: str, bindings: dict[str, Any], subject: str | None) -> None:
    """Logs, events and exec output are read of the subject (logs also of the pods a `where`
    binding picks for it)."""
    for name, binding in bindings.items():
        target = binding.get("logs") or binding.get("events_for") or binding.get("exec")
        if target is None or target == subject:
            continue
        picked = bindings.get(target) or {}
        if "logs" in binding and picked.get("objects") == "pods" and "where" in picked:
            continue
        raise RuleLoadError(
            f"{rel}: with.{name}: {target!r} is not the for_each subject"
            + (" nor a binding of pods with `where`" if "logs" in binding else "")
        )


class _Compiler:
    def __init__(self, rel: str, defined: dict[str, cel.Function]) -> None:
        self.rel = rel
        self.defined = defined

    def expr(self, where: str, source: str, scope: set[str]) -> Expr:
        try:
            program = cel.compile(source, FUNCTIONS, self.defined)
        except (cel.CelSyntaxError, cel.CelCompileError) as exc:
            raise RuleLoadError(f"{self.rel}: {where}: invalid CEL: {_first_line(exc)}") from exc
        unknown = sorted(program.variables - scope)
        if unknown:
            raise RuleLoadError(f"{self.rel}: {where}: unknown name(s) {', '.join(unknown)}")
        return Expr(where=where, source=source, program=program)


def _template(rel: str, where: str, source: str, names: set[str]) -> Text:
    if "{" in source:
        try:
            parsed = TEMPLATES.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise RuleLoadError(f"{rel}: {where}: invalid template: {exc.message}") from exc
        # Every name a template reads is a rule var, `tf`, `object`, or one it binds itself
        # (a loop's variables and `loop`, a set): what else it reads is a typo.
        found = list(parsed.find_all(jinja_nodes.Name))
        bound = {n.name for n in found if n.ctx != "load"} | set(TEMPLATES.globals)
        if parsed.find(jinja_nodes.For) is not None:
            bound.add("loop")
        unknown = sorted({n.name for n in found if n.ctx == "load"} - bound - names)
        if unknown:
            raise RuleLoadError(
                f"{rel}: {where}: unknown template variable(s) {', '.join(unknown)}"
            )
    return Text(source)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
