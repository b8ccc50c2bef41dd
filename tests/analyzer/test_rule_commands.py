"""Every command a rule gives is one a user can paste: bash parses it, and every kubectl and
helm flag it uses exists.

Commands are checked as findings render them, from every sample bundle (a rule's `commands`
are one list for both languages: the en and zh reports show the same commands), and, for
every rule, as written: each branch of its `{% if %}` and `{% for %}` with every `{{ ... }}`
replaced by a word, so a branch no sample reaches is checked too.

`<word>` in a command is a placeholder for the user to fill in (`<name>`,
`<installed-chart-version>`): bash would read it as a redirection, and refuses the command
until it is filled in. The check replaces each placeholder by its word first; any other `<` is
an error (no command reads a file on standard input).

Flags are checked against the real tools: kubectl's against `kubectl <command> --help` and
`kubectl options` (the kubectl on PATH); helm is not installed here, so helm's against
helm_flags.yaml beside this file, taken from Helm's generated command reference (flags both
Helm 3 and Helm 4 have). Only kubectl and helm are checked (not `oc`, nor what runs after
`--` in a container).
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml
from emulatorkit import KUBECTL
from scenarioloader import scenario_names

from analyzer.bundle import Bundle
from analyzer.rules.engine import analyze
from analyzer.rules.loading import load_rules

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bundles"
HELM_FLAGS = yaml.safe_load((Path(__file__).with_name("helm_flags.yaml")).read_text("utf-8"))
RULES = {rule.id: rule for rule in load_rules()}

PLACEHOLDER = re.compile(r"<([a-z][a-z0-9-]*)>")
OPERATORS = {"|", "||", "&&", ";", "&"}
REDIRECTS = {">", ">>"}


# ------------------------------------------------------------------------------- the checker
def command_problems(command: str) -> list[str]:
    """What is wrong with a command as a user would paste it (placeholders filled in)."""
    filled = PLACEHOLDER.sub(lambda m: m.group(1), command)
    if "<" in _strip_comment(filled):
        return ["'<' that is not a <placeholder>"]
    if "{{" in filled or "{%" in filled or re.search(r"\bNone\b", filled):
        return ["template left unrendered or a null value"]
    parsed = subprocess.run(["bash", "-n", "-c", filled], capture_output=True, text=True)
    if parsed.returncode != 0:
        return [f"bash -n: {parsed.stderr.strip()}"]
    problems: list[str] = []
    for argv in invocations(filled):
        if argv[0] in ("kubectl", "helm"):
            problems += [f"{argv[0]}: {p}" for p in flag_problems(argv[0], argv[1:])]
    return problems


def _strip_comment(command: str) -> str:
    """The command without its trailing comment: bash's `#` at the start of a word, unquoted."""
    quote = ""
    for i, ch in enumerate(command):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i]
    return command


def invocations(command: str) -> list[list[str]]:
    """Each simple command of a pipeline or list, without redirections."""
    lexer = shlex.shlex(_strip_comment(command), posix=True, punctuation_chars=True)
    lexer.commenters = ""
    found: list[list[str]] = [[]]
    tokens = iter(lexer)
    for token in tokens:
        if token in OPERATORS:
            found.append([])
        elif token in REDIRECTS:
            next(tokens, None)  # the file written to
        else:
            found[-1].append(token)
    return [argv for argv in found if argv]


class Tool:
    """A command-line tool's commands and flags: subcommands of a command path, and the flags
    of a path as {long name: kind} with {shorthand: long name}."""

    def subcommands(self, path: tuple[str, ...]) -> set[str]:
        raise NotImplementedError

    def needs_subcommand(self, path: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def flags(self, path: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
        raise NotImplementedError


class Kubectl(Tool):
    """kubectl, from its own help (`kubectl <path> --help`, `kubectl options`), read once."""

    @staticmethod
    @cache
    def help(path: tuple[str, ...]) -> str:
        argv = [KUBECTL, *path, "--help"] if path != ("options",) else [KUBECTL, "options"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr}"
        return done.stdout

    def subcommands(self, path: tuple[str, ...]) -> set[str]:
        found, in_block = set(), False
        for line in self.help(path).splitlines():
            if re.match(r"^[A-Z][\w ()]*Commands[\w ()]*:$", line):
                in_block = True
            elif in_block and (m := re.match(r"^  ([a-z][\w-]*)\s", line)):
                found.add(m.group(1))
            elif not line.strip():
                in_block = False
        return found

    def needs_subcommand(self, path: tuple[str, ...]) -> bool:
        if not path:
            return True
        usage = self.help(path).split("Usage:", 1)[-1].strip().splitlines()[0]
        after = usage.split(" ".join(path), 1)[-1]  # "SUBCOMMAND ...", "(docker-registry | ...)"
        return re.match(r"\s*(SUBCOMMAND|\([\w-]+( \| [\w-]+)+\))", after) is not None

    def flags(self, path: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
        kinds: dict[str, str] = {}
        shorts: dict[str, str] = {}
        for text in (self.help(path), self.help(("options",))):
            for m in re.finditer(r"^ {4}(?:-(\w), )?--([\w-]+)=(.*):$", text, re.M):
                short, name, default = m.groups()
                kinds[name] = "bool" if default in ("true", "false") else "value"
                if short:
                    shorts[short] = name
        return kinds, shorts


class Helm(Tool):
    """helm, from helm_flags.yaml (helm is not installed where the tests run)."""

    def subcommands(self, path: tuple[str, ...]) -> set[str]:
        depth = len(path)
        return {
            key.split()[depth]
            for key in HELM_FLAGS
            if key != "global" and tuple(key.split()[:depth]) == path and len(key.split()) > depth
        }

    def needs_subcommand(self, path: tuple[str, ...]) -> bool:
        return " ".join(path) not in HELM_FLAGS

    def flags(self, path: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
        own, common = HELM_FLAGS[" ".join(path)], HELM_FLAGS["global"]
        kinds = {**common["flags"], **own["flags"]}
        return kinds, {**common.get("short", {}), **own.get("short", {})}


TOOLS: dict[str, Tool] = {"kubectl": Kubectl(), "helm": Helm()}


def flag_problems(tool_name: str, args: list[str]) -> list[str]:
    """The unknown commands and flags, and flags missing their value, of one invocation."""
    tool = TOOLS[tool_name]
    path: tuple[str, ...] = ()
    rest = list(args)
    while rest and not rest[0].startswith("-") and rest[0] in tool.subcommands(path):
        path += (rest.pop(0),)
    if tool.needs_subcommand(path):
        return [f"unknown command {' '.join((*path, *rest[:1]))!r}"]
    kinds, shorts = tool.flags(path)
    where = " ".join(path)
    problems: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg == "--":
            break  # what follows is the container's command
        if not arg.startswith("-") or arg == "-":
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            names, attached = [name], (value if eq else None)
        else:
            names, attached = _shorthands(arg[1:], kinds, shorts)
            if names is None:
                problems.append(f"{where}: unknown shorthand flag in {arg!r}")
                continue
        for name in names:
            if name not in kinds:
                problems.append(f"{where}: unknown flag --{name}")
        last = names[-1]
        if kinds.get(last) != "value":
            continue
        if attached is None:
            value = rest[i] if i < len(rest) else None
            i += 1
            # "-" is a value: standard input (`kubectl apply -f -`); so is a negative number.
            if value is None or (value.startswith("-") and not re.match(r"-(\d|$)", value)):
                problems.append(f"{where}: --{last} needs a value")
        elif attached == "":
            problems.append(f"{where}: --{last} has an empty value")
    return problems


def _shorthands(
    letters: str, kinds: dict[str, str], shorts: dict[str, str]
) -> tuple[list[str] | None, str | None]:
    """pflag's shorthand group: `-it` is -i -t; `-ojson` and `-o=json` give -o a value."""
    names: list[str] = []
    for n, letter in enumerate(letters):
        if letter not in shorts:
            return None, None
        names.append(shorts[letter])
        if kinds.get(shorts[letter]) == "value":
            attached = letters[n + 1 :].removeprefix("=")
            return names, (attached if n + 1 < len(letters) else None)
    return names, None


# ----------------------------------------------------------------------- the checker, checked
@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("kubectl get pods -A -o wide --sort-by=.metadata.name", None),
        ("kubectl get pods --sortby=.metadata.name", "kubectl: get: unknown flag --sortby"),
        ("kubectl get pods -Ao wide", None),
        ("kubectl get pods -ojson -n tf-system", None),
        ("kubectl get pods -z", "kubectl: get: unknown shorthand flag in '-z'"),
        ("kubectl logs x -c", "kubectl: logs: --container needs a value"),
        ("kubectl logs x -n -c y", "kubectl: logs: --namespace needs a value"),
        ("kubectl gett pods", "kubectl: unknown command 'gett'"),
        ("kubectl rollout restartt deploy/x", "kubectl: unknown command 'rollout restartt'"),
        ("kubectl create secret docker-registry <name> --docker-server=r.io", None),
        (
            "kubectl describe pod x --docker-server=r.io",
            "kubectl: describe: unknown flag --docker-server",
        ),
        ("kubectl debug node/n -it --image=busybox -- chroot /host sh -c 'ls --bogus'", None),
        ("kubectl get pods | grep x && helm list -A", None),
        (
            "kubectl label pod p a=b --dry-run=client -o yaml > pod.yaml && kubectl replace --force -f pod.yaml",
            None,
        ),
        ("kubectl edit gpupool p  # spec.componentConfig --nonsense", None),
        ("kubectl get pods 'unterminated", "bash -n"),
        ("kubectl get pod <name", "'<' that is not a <placeholder>"),
        ("kubectl get pod {{ name }}", "template left unrendered or a null value"),
        ("kubectl get pod -n None", "template left unrendered or a null value"),
        ("helm upgrade r tensor-fusion/tensor-fusion --version 1.8.3 -n ns --reuse-values", None),
        ("helm upgrade r c --versoin 1.8.3", "helm: upgrade: unknown flag --versoin"),
        ("helm upgrade r c --reuse-values --version", "helm: upgrade: --version needs a value"),
        ("helm upgrade r c --version <installed-chart-version> -i", None),
        ("helm get values r -n ns -a", None),
        ("helm get valuez r", "helm: unknown command 'get valuez'"),
        (
            "helm pull tensor-fusion/tensor-fusion --untar --set x=y",
            "helm: pull: unknown flag --set",
        ),
        ("oc adm policy add-scc-to-user privileged -z sa --whatever", None),
    ],
)
def test_the_checker_finds_what_a_user_would_hit(command: str, problem: str | None) -> None:
    problems = command_problems(command)
    if problem is None:
        assert problems == []
    else:
        assert problems and problems[0].startswith(problem), problems


def test_kubectl_is_the_real_one() -> None:
    assert shutil.which(KUBECTL), "the flag check reads the real kubectl's help"
    assert "get" in Kubectl().subcommands(())


# ---------------------------------------------------------------------------- the rules
@cache
def fired_commands() -> dict[str, list[tuple[str, str]]]:
    """rule id -> (scenario, command) of every finding in every sample bundle."""
    found: dict[str, list[tuple[str, str]]] = {}
    rules = list(RULES.values())
    for name in scenario_names(SAMPLES):
        for finding in analyze(Bundle.open(SAMPLES / f"{name}.tar.zst"), rules).findings():
            for command in finding.commands:
                found.setdefault(finding.rule_id, []).append((name, command))
    return found


def template_variants(source: str, word: str = "value") -> list[str]:
    """Each branch of a command template's `{% if %}`/`{% for %}` (a loop once, and its
    `{% else %}`), every `{{ ... }}` replaced by `word`."""
    text = re.sub(r"\{\{.*?\}\}", word, source)
    parts = re.split(r"(\{%-?.*?-?%\})", text)
    pos = 0

    def block(stop: tuple[str, ...]) -> tuple[list[str], str]:
        """Alternatives of the text up to a tag in `stop`, and that tag's keyword."""
        nonlocal pos
        alternatives = [""]
        while pos < len(parts):
            part = parts[pos]
            pos += 1
            tag = re.match(r"\{%-?\s*(\w+)", part)
            if not tag:
                alternatives = [a + part for a in alternatives]
                continue
            keyword = tag.group(1)
            if keyword in stop:
                return alternatives, keyword
            end = "endif" if keyword == "if" else "endfor"
            branches: list[str] = []
            closed, has_else = "", False
            while closed != end:
                inner, closed = block(("elif", "else", end))
                branches += inner
                has_else = has_else or closed == "else"
            if not has_else:
                branches.append("")  # a false if, an empty loop: nothing
            alternatives = [a + b for a, b in itertools.product(alternatives, branches)]
        return alternatives, ""

    found, _ = block(())
    return sorted(set(found))


def test_template_variants_cover_every_branch() -> None:
    source = "a{% if x %} -c {{ c }}{% elif y %} -d{% else %} -e{% endif %}{% for n in m %} {{ n }}{% if not loop.last %};{% endif %}{% else %} none{% endfor %}"
    assert template_variants(source) == sorted(
        {
            "a -c value value;", "a -c value value", "a -c value none",
            "a -d value;", "a -d value", "a -d none",
            "a -e value;", "a -e value", "a -e none",
        }
    )  # fmt: skip


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_command_a_finding_gives_is_valid(rule_id: str) -> None:
    bad = {
        (scenario, command, problem)
        for scenario, command in fired_commands().get(rule_id, [])
        for problem in command_problems(command)
    }
    assert not bad, sorted(bad)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_branch_of_every_command_is_valid(rule_id: str) -> None:
    bad = {
        (variant, problem)
        for template in RULES[rule_id].commands
        for variant in template_variants(template.source)
        for problem in command_problems(variant)
    }
    assert not bad, sorted(bad)
