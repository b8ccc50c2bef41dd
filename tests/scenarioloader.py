"""Load a hand-written scenario source directory into the emulator's `ClusterData`: how the
tests, scripts/make_samples.py and bench/ give the emulator a cluster to serve.

    sample_bundles/<name>/
      scenario.yaml   description, base, serverVersion, include, delete, images, helm
      objects/*.yaml  objects as `kubectl get -o yaml` shows them (multi-document, or kind: List)
      logs/<ns>/<pod>/<container>.log           current container log
      logs/<ns>/<pod>/<container>.previous.log  previous (terminated) container log
      exec/<ns>/<pod>/<container>.yaml          replies to `kubectl exec` in that container
      helm/<release>.yaml                       a Helm 3 release, stored as `helm install` does

An exec file is a YAML list; each entry is one command, its argv matched exactly:

    - argv: [cat, /etc/ld.so.preload]         # required: non-empty list of strings
      stdout: |                               # optional, default ""
        /tensor-fusion-limiter/libcuda_limiter.so
      stderr: ""                              # optional, default ""
      exit_code: 0                            # optional, 0..255, default 0
      delay: 0.0                              # optional: seconds between output and exit

A Helm release file is what `helm get all` would show, readable:

    namespace: tensor-fusion-sys              # required
    revision: 3                               # optional, default 1
    status: deployed                          # optional, default deployed
    driver: secret                            # optional: secret (Helm's default) or configmap
    chart: {name: tensor-fusion, version: 1.8.7, appVersion: 2.17.0}   # required
    lastDeployed: "2026-11-30T08:31:05Z"      # optional
    values: {...}                             # optional: what the user set (helm get values)
    manifest: |                               # optional: the rendered templates
      ...

The loader encodes it into the storage record Helm itself writes (a `helm.sh/release.v1`
Secret `sh.helm.release.v1.<release>.v<revision>`, data gzip+base64, or the ConfigMap of
HELM_DRIVER=configmap), so the collector decodes exactly what it would find on a cluster. These
are the only Secrets a scenario can hold, and the only ones the emulator serves.

Write `sh -c` scripts as block scalars (`- |-`) so they match the caller's argv byte for byte.
A command with no entry answers like a container that lacks the binary (see the emulator).

Versions: `images` retags every image of a repository (`tensorfusion/tensor-fusion-operator:
"1.48.6"`) in every object (spec, status, TensorFusion's own resources), and the start line
(`version: ..., hash: ...`) of the containers that run it, with the release's own commit;
`helm` replaces keys of the Helm release (`chart: {name, version, appVersion}`, `values`), so a
scenario says "chart 1.7.6 running operator 1.48.6" in four lines.

Order: base (recursively) -> include files -> own objects (same identity replaces) -> own logs
and exec replies (same key replaces, so a child overrides single commands) -> delete (a deleted
Pod takes its logs and exec replies with it) -> images, helm. Every object must have a type: built-in, or a CustomResourceDefinition present in the
scenario. Missing uid/resourceVersion/creationTimestamp are filled deterministically so the
served data is realistic and stable from run to run.
"""

from __future__ import annotations

import copy
import functools
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analyzer.rules.releases import load_releases
from emulator.cluster import ClusterData, ExecKey, ExecReply, LogKey, version_info
from k8s.helm_record import encode_record
from k8s.images import parse_image
from k8s.semver import parse
from k8s.types import SECRET_KEY, InvalidCRD, crd_type, served_versions

SCENARIO_FILE = "scenario.yaml"
HELM_KEYS = {
    "namespace",
    "revision",
    "status",
    "driver",
    "chart",
    "lastDeployed",
    "values",
    "manifest",
}
# `collect`: extra tf-collect arguments the round-trip tests use for this scenario
# (e.g. ["--exec"]); the loader only checks that it is a list of strings.
SCENARIO_KEYS = {
    "description", "base", "serverVersion", "include", "delete", "collect", "collect_exit",
    "images", "helm",
}  # fmt: skip
# A fixed time for objects that do not say when they were created: stable, obviously synthetic.
DEFAULT_CREATION_TIMESTAMP = "2025-01-01T00:00:00Z"
_UID_NAMESPACE = uuid.UUID("6f1c2b9e-7a43-4c1e-9a57-0d3f1e6b2a10")
_FIRST_RESOURCE_VERSION = 1000
EXEC_KEYS = {"argv", "stdout", "stderr", "exit_code", "delay"}

# libyaml's safe loader where PyYAML was built with it (its wheels are): scenarios are read
# hundreds of times a test run, and parsing them dominated the suite with the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the file and the object."""


@dataclass
class _Doc:
    source: Path
    obj: dict[str, Any]

    @property
    def identity(self) -> tuple[str, str, str, str]:
        meta = self.obj.get("metadata") or {}
        group = str(self.obj.get("apiVersion", "")).rpartition("/")[0]
        return (group, str(self.obj.get("kind", "")), meta.get("namespace") or "", meta.get("name"))

    @property
    def ref(self) -> str:
        """Kind/namespace/name, as the loader's errors name an object."""
        _group, kind, ns, name = self.identity
        return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


@dataclass
class _Layer:
    docs: list[_Doc] = field(default_factory=list)
    logs: dict[LogKey, str] = field(default_factory=dict)
    log_sources: dict[LogKey, Path] = field(default_factory=dict)
    server_version: str | None = None
    execs: dict[ExecKey, ExecReply] = field(default_factory=dict)
    exec_sources: dict[ExecKey, Path] = field(default_factory=dict)
    helm: dict[str, tuple[Path, dict[str, Any]]] = field(default_factory=dict)  # release ->

    def put(self, doc: _Doc) -> None:
        for i, old in enumerate(self.docs):
            if old.identity == doc.identity:
                self.docs[i] = doc
                return
        self.docs.append(doc)


def scenario_names(root: Path) -> list[str]:
    """Scenario directories under root (those with scenario.yaml), skipping names with '_'."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith("_") and (p / SCENARIO_FILE).is_file()
    )


def load_scenario(path: Path) -> ClusterData:
    """Load one scenario directory (and its bases) into a ClusterData."""
    path = Path(path)
    layer = _load_layer(path, stack=())
    return _build(layer)


# --- reading the layers ----------------------------------------------------------------------


def _read_meta(path: Path) -> dict[str, Any]:
    meta_file = path / SCENARIO_FILE
    if not meta_file.is_file():
        raise ScenarioError(f"{meta_file}: not found (a scenario directory needs {SCENARIO_FILE})")
    meta = _read_mapping(meta_file, SCENARIO_KEYS)
    for key in ("include", "delete", "collect"):
        if not isinstance(meta.get(key, []), list):
            raise ScenarioError(f"{meta_file}: {key} must be a list")
    if not all(isinstance(a, str) for a in meta.get("collect", [])):
        raise ScenarioError(f"{meta_file}: collect must be a list of strings")
    return meta


def _read_mapping(file: Path, allowed: set[str]) -> dict[str, Any]:
    """A YAML mapping of `allowed` keys only: a misspelt key would otherwise be ignored."""
    try:
        data = yaml.load(file.read_text(encoding="utf-8"), Loader=_LOADER) or {}
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{file}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{file}: must be a mapping")
    unknown = sorted(map(str, set(data) - allowed))
    if unknown:
        raise ScenarioError(
            f"{file}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    return data


def collect_args(path: Path) -> list[str]:
    """The extra tf-collect arguments a scenario asks its round trip to use."""
    return list(_read_meta(path).get("collect", []))


def collect_exit(path: Path) -> int:
    """The exit code tf-collect gives on the scenario (3: a bundle, with warnings)."""
    return int(_read_meta(path).get("collect_exit", 0))


def _load_layer(path: Path, stack: tuple[Path, ...]) -> _Layer:
    path = path.resolve()
    if path in stack:
        chain = " -> ".join(p.name for p in (*stack, path))
        raise ScenarioError(f"{path / SCENARIO_FILE}: base cycle: {chain}")
    meta = _read_meta(path)
    root = path.parent
    layer = _Layer()
    if meta.get("base"):
        layer = _load_layer(root / str(meta["base"]), (*stack, path))
    for inc in meta.get("include", []):
        for file in _include_files(root / str(inc), path / SCENARIO_FILE):
            for doc in _read_objects(file):
                layer.put(doc)
    objects_dir = path / "objects"
    if objects_dir.is_dir():
        for file in _yaml_files(objects_dir):
            for doc in _read_objects(file):
                layer.put(doc)
    _read_logs(path / "logs", layer)
    _read_execs(path / "exec", layer)
    for file in sorted((path / "helm").glob("*.yaml")) if (path / "helm").is_dir() else ():
        layer.helm[file.stem] = (file, _read_helm(file))
    for entry in meta.get("delete", []):
        _delete(layer, str(entry), path / SCENARIO_FILE)
    if meta.get("images"):
        _retag(layer, meta["images"], path / SCENARIO_FILE)
    if meta.get("helm"):
        if not isinstance(meta["helm"], dict) or not set(meta["helm"]) <= HELM_KEYS:
            raise ScenarioError(f"{path / SCENARIO_FILE}: helm: a mapping of {sorted(HELM_KEYS)}")
        for release, (file, spec) in list(layer.helm.items()):
            layer.helm[release] = (file, {**spec, **meta["helm"]})
    if meta.get("serverVersion"):
        layer.server_version = str(meta["serverVersion"])
    return layer


def _retag(layer: _Layer, images: Any, meta_file: Path) -> None:
    """Give every image of each repository in `images` its new tag, and the start lines of
    the containers that run it the version and commit of that release."""
    if not isinstance(images, dict) or not all(isinstance(v, str) for v in images.values()):
        raise ScenarioError(f"{meta_file}: images: a mapping of repository -> tag")
    retagged: dict[tuple[str, str, str], str] = {}  # (namespace, pod, container) -> tag
    for doc in layer.docs:
        retag_value(doc.obj, images)
        retagged.update(retagged_containers(doc.obj, images))
    for key in layer.logs:
        tag = retagged.get((key.namespace, key.pod, key.container))
        if tag is not None:
            layer.logs[key] = START_LINE.sub(lambda m, t=tag: start_line(m, t), layer.logs[key])


def retagged_containers(
    obj: dict[str, Any], images: dict[str, str]
) -> dict[tuple[str, str, str], str]:
    """(namespace, pod, container) -> new tag of each container of a Pod that runs an image
    of `images` (whose start lines then name that release)."""
    if obj.get("kind") != "Pod":
        return {}
    meta, spec = obj["metadata"], obj.get("spec") or {}
    found = {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        path = parse_image(str(container.get("image", ""))).path
        if path in images:
            found[(meta.get("namespace", ""), meta["name"], container.get("name", ""))] = images[
                path
            ]
    return found


def retag_value(value: Any, images: dict[str, str]) -> None:
    if isinstance(value, list):
        for item in value:
            retag_value(item, images)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if isinstance(item, str) and (key == "image" or key.endswith("Image")):
            ref = parse_image(item)
            if ref.path in images:
                host = f"{ref.registry}/" if ref.registry else ""
                prefix = "docker.io/" if item.startswith("docker.io/") else host
                value[key] = f"{prefix}{ref.path}:{images[ref.path]}"
        else:
            retag_value(item, images)


START_LINE = re.compile(r"version: ([^,\s]*), hash: ([0-9a-fA-F]{7,40})")


def start_line(match: re.Match[str], tag: str) -> str:
    """A start line of release `tag`: its version (kept empty where the build logs none, as
    the hypervisor's does) and the commit the release tag names."""
    version = parse(tag)
    commit = _release_commits().get(f"v{version}", match.group(2)) if version else match.group(2)
    logged = str(version) if match.group(1) and version else match.group(1)
    return f"version: {logged}, hash: {commit}"


@functools.cache
def _release_commits() -> dict[str, str]:
    data = load_releases(Path(__file__).resolve().parents[1] / "rules")
    return {tag: commit for commit, tag in data.tags.items()}


def _yaml_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def _include_files(target: Path, meta_file: Path) -> list[Path]:
    if target.is_dir():
        return _yaml_files(target)
    if target.is_file():
        return [target]
    raise ScenarioError(f"{meta_file}: include {target} does not exist")


def _read_objects(file: Path) -> list[_Doc]:
    try:
        raw = list(yaml.load_all(file.read_text(encoding="utf-8"), Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{file}: invalid YAML: {exc}") from exc
    docs: list[_Doc] = []
    for index, obj in enumerate(raw):
        if obj is None:
            continue
        if not isinstance(obj, dict):
            raise ScenarioError(f"{file}: document {index + 1} is not a mapping")
        items = obj.get("items") if obj.get("kind") == "List" else [obj]
        for item in items or []:
            docs.append(_check_doc(file, index, item))
    return docs


def _check_doc(file: Path, index: int, obj: Any) -> _Doc:
    if not isinstance(obj, dict):
        raise ScenarioError(f"{file}: document {index + 1}: an item is not a mapping")
    meta = obj.get("metadata")
    for key in ("apiVersion", "kind"):
        if not obj.get(key):
            raise ScenarioError(f"{file}: document {index + 1}: {key} is missing")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise ScenarioError(
            f"{file}: document {index + 1} ({obj['kind']}): metadata.name is missing"
        )
    return _Doc(file, obj)


def _read_logs(logs_dir: Path, layer: _Layer) -> None:
    if not logs_dir.is_dir():
        return
    for file in sorted(logs_dir.rglob("*.log")):
        rel = file.relative_to(logs_dir).parts
        if len(rel) != 3:
            raise ScenarioError(
                f"{file}: logs must be logs/<namespace>/<pod>/<container>[.previous].log"
            )
        namespace, pod, fname = rel
        previous = fname.endswith(".previous.log")
        container = fname[: -len(".previous.log")] if previous else fname[: -len(".log")]
        key = LogKey(namespace, pod, container, previous)
        layer.logs[key] = file.read_text(encoding="utf-8", errors="replace")
        layer.log_sources[key] = file


def _delete(layer: _Layer, entry: str, meta_file: Path) -> None:
    parts = entry.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise ScenarioError(
            f"{meta_file}: delete entry {entry!r} must be Kind/namespace/name or Kind/name"
        )
    kind, group = parts[0], None
    if "." in kind:  # Kind.group disambiguates, e.g. Event.events.k8s.io
        kind, group = kind.split(".", 1)
    ns, name = (parts[1], parts[2]) if len(parts) == 3 else ("", parts[1])
    keep = [
        d
        for d in layer.docs
        if not (
            d.identity[1] == kind
            and d.identity[2:] == (ns, name)
            and (group is None or d.identity[0] == group)
        )
    ]
    if len(keep) == len(layer.docs):
        raise ScenarioError(f"{meta_file}: delete {entry!r}: no such object in the scenario")
    layer.docs = keep
    if kind == "Pod" and group in (None, ""):
        for key in [k for k in layer.logs if (k.namespace, k.pod) == (ns, name)]:
            del layer.logs[key]
            layer.log_sources.pop(key, None)
        for exec_key in [k for k in layer.execs if (k.namespace, k.pod) == (ns, name)]:
            del layer.execs[exec_key]
            layer.exec_sources.pop(exec_key, None)


# --- building the ClusterData ----------------------------------------------------------------


def _build(layer: _Layer) -> ClusterData:
    data = ClusterData()
    if layer.server_version:
        try:
            data.server_version = version_info(layer.server_version)
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
    data.add_builtin_types()
    served: dict[tuple[str, str], set[str]] = {}  # (group, kind) -> every served version
    for doc in layer.docs:
        if doc.obj.get("kind") == "CustomResourceDefinition":
            try:
                rtype = crd_type(doc.obj, str(doc.source))
            except InvalidCRD as exc:
                raise ScenarioError(str(exc)) from None
            data.add_type(rtype)
            served[(rtype.group, rtype.kind)] = served_versions(doc.obj)
    helm = [_Doc(file, helm_record(name, spec)) for name, (file, spec) in layer.helm.items()]
    docs = [_prepare(doc, data, served) for doc in layer.docs + helm]
    _fill_resource_versions(docs)
    for doc in docs:
        data.add_object(doc.obj)
    _link_references(data)
    _check_containers(layer.log_sources, data)
    data.logs.update(layer.logs)
    _check_containers(layer.exec_sources, data)
    data.execs.update(layer.execs)
    return data


def _prepare(doc: _Doc, data: ClusterData, served: dict[tuple[str, str], set[str]]) -> _Doc:
    obj = copy.deepcopy(doc.obj)
    group, kind, ns, name = doc.identity
    rtype = data.type_for_kind(obj["apiVersion"], kind)
    version = str(obj["apiVersion"]).rpartition("/")[2]
    if rtype is None and version in served.get((group, kind), ()):
        # Another served version of a CRD: the API converts (strategy None), so do we.
        rtype = next(t for t in data.types.values() if (t.group, t.kind) == (group, kind))
        obj["apiVersion"] = rtype.api_version
    if rtype is None:
        raise ScenarioError(
            f"{doc.source}: {doc.ref}: no resource type for apiVersion "
            f"{obj['apiVersion']!r} kind {kind!r} (not built in, and no "
            "CustomResourceDefinition in the scenario serves it)"
        )
    if rtype.key == SECRET_KEY and not _is_helm_file(doc.source):
        raise ScenarioError(
            f"{doc.source}: {doc.ref}: Secrets are never served (the collector never "
            "reads them); describe the Secret's effect instead (a Helm release goes in "
            "helm/<release>.yaml)"
        )
    meta = obj["metadata"]
    if rtype.namespaced and not ns:
        meta["namespace"] = ns = "default"
    if not rtype.namespaced and ns:
        raise ScenarioError(
            f"{doc.source}: {doc.ref}: {rtype.kind} is cluster-scoped; remove metadata.namespace"
        )
    meta.setdefault("uid", object_uid(rtype.group, kind, ns, name))
    meta.setdefault("creationTimestamp", DEFAULT_CREATION_TIMESTAMP)
    completer = _COMPLETERS.get(rtype.key)
    if completer is not None:
        completer(obj)
    return _Doc(doc.source, obj)


# --- Helm releases ----------------------------------------------------------------------------


def _is_helm_file(source: Path) -> bool:
    return source.parent.name == "helm"


def _read_helm(file: Path) -> dict[str, Any]:
    spec = _read_mapping(file, HELM_KEYS)
    chart = spec.get("chart")
    if not spec.get("namespace") or not isinstance(chart, dict) or not chart.get("version"):
        raise ScenarioError(f"{file}: namespace and chart.name/version are required")
    if spec.get("driver", "secret") not in ("secret", "configmap"):
        raise ScenarioError(f"{file}: driver must be secret or configmap")
    if not isinstance(spec.get("values", {}), dict):
        raise ScenarioError(f"{file}: values must be a mapping")
    return spec


def helm_record(release: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The storage record Helm 3 writes for one release revision."""
    revision = int(spec.get("revision", 1))
    deployed = str(spec.get("lastDeployed", DEFAULT_CREATION_TIMESTAMP))
    chart = spec["chart"]
    body = {
        "name": release,
        "namespace": spec["namespace"],
        "version": revision,
        "info": {
            "first_deployed": deployed,
            "last_deployed": deployed,
            "deleted": "",
            "description": "Install complete" if revision == 1 else "Upgrade complete",
            "status": str(spec.get("status", "deployed")),
        },
        "chart": {
            "metadata": {
                "apiVersion": "v2",
                "name": chart.get("name", release),
                "version": str(chart["version"]),
                "appVersion": str(chart.get("appVersion", "")),
            },
            "values": {},
            "templates": [],
        },
        "config": spec.get("values") or {},
        "manifest": spec.get("manifest", ""),
    }
    record = encode_record(body, driver=spec.get("driver", "secret"))
    record["metadata"]["creationTimestamp"] = deployed
    return record


def object_uid(group: str, kind: str, namespace: str, name: str) -> str:
    """The uid given to an object that has none: stable across runs and machines."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{group}/{kind}/{namespace}/{name}"))


# Fields the API server or kubelet always set, which hand-written objects tend to leave out;
# typed clients (kubernetes>=35 validates with pydantic) reject objects without them.


def _complete_pod(pod: dict[str, Any]) -> None:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    images = {
        c.get("name"): c.get("image", "")
        for part in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(part) or []
    }
    for part in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(part) or []:
            cs.setdefault("image", images.get(cs.get("name"), ""))
            cs.setdefault("imageID", "")
            cs.setdefault("ready", False)
            cs.setdefault("restartCount", 0)


def _complete_node(node: dict[str, Any]) -> None:
    info = node.setdefault("status", {}).setdefault("nodeInfo", {})
    seed = uuid.uuid5(_UID_NAMESPACE, "node/" + node["metadata"]["name"])
    info.setdefault("architecture", "amd64")
    info.setdefault("operatingSystem", "linux")
    info.setdefault("bootID", str(uuid.uuid5(seed, "boot")))
    info.setdefault("machineID", uuid.uuid5(seed, "machine").hex)
    info.setdefault("systemUUID", str(uuid.uuid5(seed, "system")).upper())
    for key in ("containerRuntimeVersion", "kernelVersion", "kubeletVersion", "osImage"):
        info.setdefault(key, "")
    info.setdefault("kubeProxyVersion", info["kubeletVersion"])


_COMPLETERS = {("", "pods"): _complete_pod, ("", "nodes"): _complete_node}


def _fill_resource_versions(docs: list[_Doc]) -> None:
    # Numbered in a stable order (by identity) so resourceVersions do not depend on file order.
    ordered = sorted(docs, key=lambda d: tuple(str(x) for x in d.identity))
    for n, doc in enumerate(ordered):
        meta = doc.obj["metadata"]
        if "resourceVersion" not in meta:
            meta["resourceVersion"] = str(_FIRST_RESOURCE_VERSION + n)
        else:
            meta["resourceVersion"] = str(meta["resourceVersion"])


def _link_references(data: ClusterData) -> None:
    """Fill uids that hand-written references leave out (describe matches events by uid)."""
    uids: dict[tuple[str, str, str], str] = {}
    for objs in data.objects.values():
        for obj in objs:
            meta = obj["metadata"]
            uids[(obj["kind"], meta.get("namespace", ""), meta["name"])] = meta["uid"]
    for obj in data.objects.get(("", "events"), []):
        ref = obj.get("involvedObject")
        _fill_uid(ref, uids, obj["metadata"].get("namespace", ""))
    for obj in data.objects.get(("events.k8s.io", "events"), []):
        _fill_uid(obj.get("regarding"), uids, obj["metadata"].get("namespace", ""))
    for objs in data.objects.values():
        for obj in objs:
            ns = obj["metadata"].get("namespace", "")
            for ref in obj["metadata"].get("ownerReferences") or []:
                _fill_uid(ref, uids, ns)


def _fill_uid(ref: Any, uids: dict[tuple[str, str, str], str], default_ns: str) -> None:
    if not isinstance(ref, dict) or ref.get("uid") or not ref.get("kind"):
        return
    ns = ref.get("namespace", default_ns)
    for candidate in (ns, ""):
        uid = uids.get((ref["kind"], candidate, ref.get("name", "")))
        if uid:
            ref["uid"] = uid
            return
    # An object outside the scenario: the uid it would have had, so references stay consistent.
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    ref["uid"] = object_uid(group, ref["kind"], ns, str(ref.get("name", "")))


def _check_containers(sources: dict[Any, Path], data: ClusterData) -> None:
    """Every log file or exec reply (keyed by namespace, pod, container) names a real container."""
    pods = {
        (p["metadata"].get("namespace", ""), p["metadata"]["name"]): p
        for p in data.objects.get(("", "pods"), [])
    }
    for key, source in sources.items():
        pod = pods.get((key.namespace, key.pod))
        if pod is None:
            raise ScenarioError(f"{source}: no pod {key.namespace}/{key.pod} in the scenario")
        spec = pod.get("spec") or {}
        names = [
            c.get("name")
            for part in ("initContainers", "containers", "ephemeralContainers")
            for c in spec.get(part) or []
        ]
        if key.container not in names:
            raise ScenarioError(
                f"{source}: pod {key.namespace}/{key.pod} has no container {key.container!r} "
                f"(it has: {', '.join(str(n) for n in names)})"
            )


# --- exec replies ----------------------------------------------------------------------------


def _read_execs(exec_dir: Path, layer: _Layer) -> None:
    if not exec_dir.is_dir():
        return
    for file in sorted(p for p in exec_dir.rglob("*") if p.is_file()):
        rel = file.relative_to(exec_dir).parts
        if len(rel) != 3 or file.suffix not in (".yaml", ".yml"):
            raise ScenarioError(
                f"{file}: exec replies must be exec/<namespace>/<pod>/<container>.yaml"
            )
        namespace, pod, fname = rel
        container = fname.rsplit(".", 1)[0]
        try:
            entries = yaml.load(file.read_text(encoding="utf-8"), Loader=_LOADER)
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{file}: invalid YAML: {exc}") from exc
        if not isinstance(entries, list):
            raise ScenarioError(f"{file}: must be a list of entries (- argv: [...])")
        seen: set[ExecKey] = set()
        for index, entry in enumerate(entries):
            argv, reply = _exec_entry(file, index, entry)
            key = ExecKey(namespace, pod, container, argv)
            if key in seen:
                raise ScenarioError(f"{file}: entry {index + 1}: argv {list(argv)} is listed twice")
            seen.add(key)
            layer.execs[key] = reply
            layer.exec_sources[key] = file


def _exec_entry(file: Path, index: int, entry: Any) -> tuple[tuple[str, ...], ExecReply]:
    """Validate one entry strictly: a typo in a key would otherwise silently serve defaults."""
    where = f"{file}: entry {index + 1}"
    if not isinstance(entry, dict):
        raise ScenarioError(f"{where}: must be a mapping with argv")
    unknown = sorted(set(entry) - EXEC_KEYS)
    if unknown:
        raise ScenarioError(
            f"{where}: unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(sorted(EXEC_KEYS))}"
        )
    argv = entry.get("argv")
    if not isinstance(argv, list) or not argv:
        raise ScenarioError(f"{where}: argv must be a non-empty list")
    if not all(isinstance(a, str) for a in argv):
        # YAML reads [sleep, 5] as an int: the API only ever carries strings, so it never matches
        raise ScenarioError(f"{where}: every argv item must be a string (quote numbers)")
    for key in ("stdout", "stderr"):
        if not isinstance(entry.get(key, ""), str):
            raise ScenarioError(f"{where}: {key} must be a string")
    code = entry.get("exit_code", 0)
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 255:
        raise ScenarioError(f"{where}: exit_code must be an integer from 0 to 255")
    delay = entry.get("delay", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
        raise ScenarioError(f"{where}: delay must be a number of seconds >= 0")
    reply = ExecReply(entry.get("stdout", ""), entry.get("stderr", ""), code, float(delay))
    return tuple(argv), reply
