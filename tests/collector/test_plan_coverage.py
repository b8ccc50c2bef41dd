"""Every command the manual asks a user to run has a collection step, per manual section."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from emulatorkit import KUBECTL
from scenariokit import tf_collect

from collector.plan import PLAN, coverage, default_plan
from tf_support_schemas.manual import load_manual

MANUAL = Path(__file__).resolve().parents[2] / "docs" / "manual"
TOOLS = ("kubectl ", "nvidia-smi", "ldconfig ", "lsmod ", "cat ")
# Commands the manual gives as fixes, not as checks: nothing to collect for them.
FIXES = ("kubectl label ", "kubectl rollout ", "helm ")


def manual_commands() -> set[tuple[str, str]]:
    """(section key, command) for every check command in the manual's code blocks and
    inline code, multi-line commands joined with single spaces."""
    sections = {s.zh: s.key for s in load_manual().sections.values()}
    found: set[tuple[str, str]] = set()
    section = None
    text = (MANUAL / "troubleshooting.zh.md").read_text()
    for part in re.split(r"(^## .*$)", text, flags=re.M):
        if part.startswith("## "):
            section = sections.get(part[3:].strip())
            continue
        if section is None:
            continue
        for block in re.findall(r"```sh\n(.*?)```", part, re.S):
            for command in _commands(block):
                found.add((section, command))
        for inline in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", part, flags=re.S)):
            inline = inline.replace("\\|", "|")
            if inline.startswith(TOOLS) and not inline.startswith(FIXES):
                found.add((section, inline))
    return found


def _commands(block: str) -> list[str]:
    commands, current, quoted = [], "", False
    for line in block.splitlines():
        current = f"{current} {line}" if current else line
        quoted ^= line.count("'") % 2 == 1
        if not quoted and not current.endswith("\\"):
            commands.append(current.strip())
            current = ""
    return [c for c in commands if c.startswith(TOOLS) and not c.startswith(FIXES)]


def test_the_manual_parser_sees_the_known_commands() -> None:
    found = manual_commands()
    assert ("baseline", "kubectl get tensorfusioncluster,gpupool,gpunode,gpu") in found
    assert ("cuda-libs", "lsmod | grep nvidia") in found
    assert any(
        c.startswith("kubectl exec <pod> -n <namespace> -c <container> -- sh -c ' cat")
        for _, c in found
    )
    assert len(found) >= 30


def test_every_manual_command_has_a_step() -> None:
    covered = {
        (section, command) for section, pairs in coverage(PLAN).items() for command, _ in pairs
    }
    missing = sorted(manual_commands() - covered)
    assert missing == [], "manual commands with no collection step:\n" + "\n".join(
        f"  [{s}] {c}" for s, c in missing
    )


def test_step_ids_are_unique_and_scoped_to_manual_sections() -> None:
    sections = set(load_manual().sections)
    ids = [s.id for s in PLAN]
    assert len(ids) == len(set(ids))
    assert {i.split("/")[0] for i in ids} <= sections
    assert {s.id for s in default_plan()} < set(ids)  # --exec and --metrics are opt-in


def test_dry_run_lists_each_command_with_its_step(tmp_path: Path) -> None:
    proc = tf_collect("--dry-run", "-o", str(tmp_path / "x"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for section, command in sorted(manual_commands()):
        assert f"[{section}]" in out
        assert f"  {command}\n" in out
    assert "covered by baseline/hypervisor-logs:" in out
    assert out.index("[baseline]") < out.index("[controller-crash]") < out.index("[image-pull]")
    assert list(tmp_path.iterdir()) == []


def test_kubectl_plugin_entry_point(tmp_path: Path) -> None:
    # `kubectl tf collect` runs the installed kubectl-tf-collect script.
    bindir = Path(sys.executable).parent
    assert (bindir / "kubectl-tf-collect").exists()
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [KUBECTL, "tf", "collect", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "covered by baseline/tf-resources" in proc.stdout
