"""Loading a bundle: its members read safely (archive.py), checked, and parsed as they stream in.

The manifest (a bundle's first member) says which members are object listings: each is parsed
when it arrives and its bytes dropped; only the members that logs, exec output and documents
are read from stay as bytes. Every member passes the leak scan (leaks.py) on its way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tf_support_schemas as schemas

from ..errors import BundleError, ExitCode
from .archive import DEFAULT_LIMITS, Limits, members
from .leaks import Leak, scan_member

OK_STATUSES = ("ok", "truncated")
MANIFEST = "manifest.json"

# What the index reads of each type of artifact, beyond what the schema requires of all.
_NEEDS = {"log": ("namespace", "pod", "container"), "objects": ("resource",)}


@dataclass
class Loaded:
    """What a bundle holds, read and checked: the manifest, every member's name, the parsed
    object listings (a listing that did not parse holds its BundleError), the bytes of the
    other members the manifest reads, and what the leak scan found."""

    manifest: dict[str, Any]
    names: set[str] = field(default_factory=set)
    # Each string value of the listings, once: a bundle repeats the same names, labels,
    # images, timestamps and env values across thousands of objects (a third of its memory).
    strings: dict[str, str] = field(default_factory=dict)
    listings: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, bytes] = field(default_factory=dict)
    leaks: list[Leak] = field(default_factory=list)


def load(path: Path, limits: Limits = DEFAULT_LIMITS) -> Loaded:
    """Read every member of the bundle at `path`. The archive's own errors (unsafe names,
    sizes, truncation) come first; then a missing or invalid manifest; a listing that does not
    parse is raised by the reader that asks for it, in the manifest's order."""
    source = str(path)
    manifest: dict[str, Any] | None = None
    problem: BundleError | None = None
    seen_manifest = False
    early: dict[str, bytes] = {}  # members that came before the manifest (an unpacked dir)
    loaded = Loaded({})
    plan: tuple[set[str], set[str]] = (set(), set())
    for name, data in members(path, limits):
        if name == MANIFEST:
            seen_manifest = True
            try:
                manifest = check_manifest(data, source)
            except BundleError as exc:
                problem = exc
                early = {}
                continue
            plan = _plan(manifest["artifacts"])
            for waiting, waiting_data in early.items():
                _take(loaded, plan, source, waiting, waiting_data)
            early = {}
            continue
        loaded.names.add(name)
        loaded.leaks += scan_member(name, data)
        if manifest is not None:
            _take(loaded, plan, source, name, data)
        elif problem is None:
            early[name] = data
    if not seen_manifest:
        raise BundleError(f"{source}: no manifest.json: not a tf-collect bundle", ExitCode.MANIFEST)
    if problem is not None:
        raise problem
    assert manifest is not None
    loaded.manifest = manifest
    return loaded


def _plan(artifacts: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The members that are object listings to parse, and those read as bytes."""
    listings: set[str] = set()
    kept: set[str] = set()
    for art in artifacts:
        if art["type"] != "objects":
            kept.update(art.get("paths", []))
        elif art["status"] in OK_STATUSES:
            listings.update(art.get("paths", []))
    return listings, kept


def _take(
    loaded: Loaded, plan: tuple[set[str], set[str]], source: str, name: str, data: bytes
) -> None:
    listings, kept = plan
    if name in listings:
        try:
            loaded.listings[name] = parse_json(data, f"{source}: {name}", loaded.strings)
        except BundleError as exc:
            loaded.listings[name] = exc
    if name in kept:
        loaded.raw[name] = data


def parse_json(raw: bytes, what: str, strings: dict[str, str] | None = None) -> Any:
    """A member's JSON, or a BundleError naming it. Nesting past the recursion limit is refused
    like any other invalid JSON (a hostile bundle, never a traceback). With `strings`, each
    string value of an object is the first equal one met (the parser shares keys itself)."""
    try:
        return json.loads(raw, object_hook=None if strings is None else _sharing(strings))
    except RecursionError:
        raise BundleError(
            f"{what} is nested too deeply to be a bundle member", ExitCode.MANIFEST
        ) from None
    except ValueError as exc:
        raise BundleError(f"{what} is not valid JSON ({exc})", ExitCode.MANIFEST) from exc


def _sharing(strings: dict[str, str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    same = strings.setdefault

    def shared(obj: dict[str, Any]) -> dict[str, Any]:
        for key, value in obj.items():
            if type(value) is str:
                obj[key] = same(value, value)  # a value replaced: the keys stay as they are
        return obj

    return shared


def check_manifest(raw: bytes, source: str) -> dict[str, Any]:
    manifest = parse_json(raw, f"{source}: manifest.json")
    if not isinstance(manifest, dict):
        raise BundleError(f"{source}: manifest.json is not a JSON object", ExitCode.MANIFEST)
    version = manifest.get("format_version")
    if version != schemas.FORMAT_VERSION:
        raise BundleError(
            f"{source}: bundle format_version {version!r} is not supported "
            f"(this tf-analyze reads {schemas.FORMAT_VERSION}); upgrade tf-support",
            ExitCode.UNSUPPORTED,
        )
    problem = schemas.first_error("manifest", manifest)
    if problem:
        raise BundleError(f"{source}: manifest.json is invalid: {problem}", ExitCode.MANIFEST)
    for i, art in enumerate(manifest["artifacts"]):
        for key in _NEEDS.get(art["type"], ()):
            if not isinstance(art.get(key), str):
                raise BundleError(
                    f"{source}: manifest.json is invalid: artifacts/{i}: a {art['type']} "
                    f"artifact needs a string {key!r}",
                    ExitCode.MANIFEST,
                )
    return manifest
