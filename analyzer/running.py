"""What runs: the version of each TensorFusion component, read from the strongest evidence.

Helm's chart and appVersion are the weakest witness: several charts pin an operator older
than their appVersion, others deploy `latest`, and the v1 -> v2 upgrade done by the book leaves
`helm list` showing the old chart. So each component's version comes from, in this order: the
start line its process logged (`version: 1.48.6, hash: ...`), its containers' image tags, the
image the node resolved (a status's `image`/`imageID` where the spec names only a digest), and
only then Helm (the values' image tag, the chart's default, appVersion). A floating tag
(`latest`) is no version: it stays unknown, with when it was pulled and the digest.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from k8s.images import ImageRef, parse_image
from k8s.semver import Version, parse
from k8s.tensorfusion import TF_GROUP

from .bundle import Bundle, ref
from .rules.functions import dig
from .rules.releases import ReleaseData

# The order the header lists them in; each is found by its image's name (the last path part).
COMPONENTS = ("operator", "hypervisor", "client", "worker", "provider", "greptimedb", "vector")
_IMAGE_NAMES = {
    "tensor-fusion-operator": "operator",
    "tensor-fusion-hypervisor": "hypervisor",
    "tensor-fusion-client": "client",
    "tensor-fusion-worker": "worker",
    "greptimedb": "greptimedb",
    "vector": "vector",
}
_PROVIDER_PREFIX = "vgpu-provider"  # vgpu-provider-nvidia, -amd, ...
# The start line of the operator (internal/version/version.go: "version: %s, hash: %s, time: %s",
# logged by cmd/main.go) and of the v2 hypervisor ("tensor fusion hypervisor starting. " + the
# same; its release build sets no version, so only the commit names it).
START_LINE = re.compile(
    r"version: ([^,\s]*), hash: ([0-9a-fA-F]{7,40})(\+dirty)?, time: ([^\s\"]+)"
)
_START_LINES_READ = 20  # a process logs its version among its first lines

SOURCES = (
    "start-line", "image-tag", "image-id", "tf-config", "helm-values", "helm-chart",
    "helm-app-version",
)  # fmt: skip
# Where TensorFusion's own resources name the images it deploys (componentConfig, providers).
_CONFIG_RESOURCES = ("tensorfusionclusters", "gpupools", "providerconfigs")
# The witnesses of what runs, not of what is configured to: the notes compare only these.
_OBSERVED = SOURCES[:3]


@dataclass(frozen=True)
class Reading:
    """One witness of a component's version."""

    source: str  # one of SOURCES
    version: str  # "1.48.6"; "" when the witness names no version (latest, a digest)
    where: str  # Pod/ns/name/container, or the Helm release
    text: str  # what it read: the start line, the image reference, the chart
    commit: str = ""  # a start line's commit
    digest: str = ""  # the image digest the node resolved (status imageID)
    started: str = ""  # when the container last started (RFC 3339)


@dataclass(frozen=True)
class Component:
    name: str
    version: str  # the strongest reading's version; "" when none names one
    source: str  # that reading's source ("" when nothing was read)
    readings: tuple[Reading, ...]
    versions: tuple[str, ...] = ()  # distinct versions its pods run (several: they disagree)
    floating: str = ""  # the floating tag (latest) when only such images name it
    pulled: str = ""  # when a floating image was last started (so pulled: Always)
    digest: str = ""  # the image digest the node resolved, for floating or digest-only images
    commit: str = ""  # the commit its start line names
    release: str = ""  # the release tag that commit is, where it is one
    commit_only: bool = False  # its start lines name a commit and no version (the hypervisor)

    @property
    def parsed(self) -> Version | None:
        return parse(self.version)


@dataclass(frozen=True)
class Note:
    """A disagreement between witnesses, said as data: `kind` names the sentence (i18n)."""

    kind: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Running:
    components: dict[str, Component]
    chart: str  # the Helm release's chart version, "" without a release
    app_version: str
    notes: tuple[Note, ...]

    def version(self, component: str) -> Version | None:
        found = self.components.get(component)
        return found.parsed if found else None


def running(bundle: Bundle, releases: ReleaseData) -> Running:
    release, _, _ = bundle.document("helm")
    release = release if isinstance(release, dict) else {}
    chart_meta = release.get("chart") or {}
    chart = str(chart_meta.get("version") or "")
    app = str(chart_meta.get("appVersion") or "")
    values = release.get("values") if isinstance(release.get("values"), dict) else {}
    readings = _pod_readings(bundle, releases)
    configured = _config_readings(bundle)  # what TensorFusion's resources, then Helm, say
    for name, found in _helm_readings(
        chart, app, values, releases, bundle.tf_namespace, release
    ).items():
        configured.setdefault(name, []).extend(found)
    components = {
        name: _component(name, readings.get(name, []), configured.get(name, []), releases)
        for name in COMPONENTS
    }
    return Running(components, chart, app, tuple(_notes(components, chart, app, values, releases)))


def _pod_readings(bundle: Bundle, releases: ReleaseData) -> dict[str, list[Reading]]:
    found: dict[str, list[Reading]] = {}
    for pod in bundle.objects("pods"):
        meta = pod["metadata"]
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        statuses = {
            s.get("name"): s
            for s in (status.get("containerStatuses") or [])
            + (status.get("initContainerStatuses") or [])
            if isinstance(s, dict)
        }
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            image = parse_image(str(container.get("image") or ""))
            name = _component_of(image)
            if name is None:
                continue
            where = f"{ref(pod)}/{container.get('name', '')}"
            out = found.setdefault(name, [])
            line = _start_line(bundle, meta.get("namespace", ""), meta["name"], container)
            if line is not None:
                version, commit, text = line
                out.append(
                    Reading(
                        "start-line",
                        version or releases.tag_of(commit).lstrip("v"),
                        where,
                        text,
                        commit=commit,
                    )
                )
            out.append(
                _image_reading(image, container, statuses.get(container.get("name")) or {}, where)
            )
    return found


def _config_readings(bundle: Bundle) -> dict[str, list[Reading]]:
    """The images TensorFusion's resources tell it to deploy: what runs where no pod of a
    component is in the bundle yet (a client image that only workloads pull)."""
    found: dict[str, list[Reading]] = {}
    for resource in _CONFIG_RESOURCES:
        for obj in bundle.objects(resource, group=TF_GROUP):
            for text in _strings(obj.get("spec")):
                image = parse_image(text)
                name = _component_of(image) if image.tag or image.digest else None
                if name is not None:
                    reading = Reading("tf-config", _tag_version(image.tag), ref(obj), text)
                    if reading not in found.get(name, []):
                        found.setdefault(name, []).append(reading)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _component_of(image: ImageRef) -> str | None:
    if image.name.startswith(_PROVIDER_PREFIX):
        return "provider"
    return _IMAGE_NAMES.get(image.name)


def _start_line(
    bundle: Bundle, ns: str, pod: str, container: dict[str, Any]
) -> tuple[str, str, str] | None:
    """(version, commit, line) of the start line the container logged, newest run first."""
    name = str(container.get("name") or "")
    for log in (bundle.log_head(ns, pod, name), bundle.log(ns, pod, name)):
        if log is None:
            continue
        for text in log.lines if log.head else log.lines[:_START_LINES_READ]:
            match = START_LINE.search(text)
            if match:
                return match.group(1), match.group(2).lower(), text.strip()
    return None


def _image_reading(
    image: ImageRef, container: dict[str, Any], status: dict[str, Any], where: str
) -> Reading:
    resolved = parse_image(str(status.get("imageID") or ""))
    started = str(dig(status, "state.running.startedAt") or "")
    digest = image.digest or resolved.digest
    spec_image = str(container.get("image") or "")
    if image.tag or not status.get("image"):
        return Reading(
            "image-tag", _tag_version(image.tag), where, spec_image, digest=digest, started=started
        )
    # The spec names a digest: the image the node reports may carry the tag.
    shown = str(status.get("image"))
    return Reading(
        "image-id",
        _tag_version(parse_image(shown).tag),
        where,
        shown,
        digest=digest,
        started=started,
    )


def _tag_version(tag: str) -> str:
    version = parse(tag)
    return str(version) if version else ""


def _helm_readings(
    chart: str,
    app: str,
    values: dict[str, Any],
    releases: ReleaseData,
    namespace: str,
    release: dict[str, Any],
) -> dict[str, list[Reading]]:
    if not chart:
        return {}
    where = f"Helm release {release.get('name') or '?'} ({namespace})"
    text = f"chart {chart}, appVersion {app}"
    out: dict[str, list[Reading]] = {}
    tag = str(dig(values, "controller.image.tag") or "")
    if tag:
        out["operator"] = [
            Reading("helm-values", _tag_version(tag), where, f"controller.image.tag={tag}")
        ]
    defaults = releases.chart(chart)
    if defaults is not None:
        out.setdefault("operator", []).append(
            Reading("helm-chart", _tag_version(defaults.operator), where, text)
        )
        hv = str(dig(values, "cluster.hypervisorImage") or "")
        if hv:
            out["hypervisor"] = [
                Reading(
                    "helm-values",
                    _tag_version(parse_image(hv).tag),
                    where,
                    f"cluster.hypervisorImage={hv}",
                )
            ]
        elif defaults.hypervisor:
            out["hypervisor"] = [
                Reading("helm-chart", _tag_version(defaults.hypervisor), where, text)
            ]
    out.setdefault("operator", []).append(
        Reading("helm-app-version", _tag_version(app), where, text)
    )
    return out


def _component(
    name: str, pods: list[Reading], helm: list[Reading], releases: ReleaseData
) -> Component:
    """A component's version: what most of its pods run (a pod's start line before its
    image); Helm's word only when no pod of it is in the bundle. Pods on a floating tag name no
    version: the component is then unknown, with when it was pulled and its digest."""
    per_pod: dict[str, Reading] = {}
    for reading in pods:  # a pod's start line comes before its image
        if reading.version and reading.where not in per_pod:
            per_pod[reading.where] = reading
    commit = next((r.commit for r in pods if r.commit), "")
    release = releases.tag_of(commit) if commit else ""
    if per_pod:
        counts = Counter(r.version for r in per_pod.values())
        version = max(counts, key=lambda v: (counts[v], parse(v) or _ZERO))
        # The strongest witness of that version among its pods.
        source = min(
            (r.source for r in per_pod.values() if r.version == version), key=SOURCES.index
        )
    elif pods:
        version, source = "", pods[0].source
    else:
        best = next((r for r in helm if r.version), None)
        version, source = (
            (best.version, best.source) if best else ("", helm[0].source if helm else "")
        )
    images = [r for r in pods if r.source != "start-line"]
    starts = [r for r in pods if r.source == "start-line"]
    floating = (
        ""
        if version
        else next(
            (t for t in (parse_image(r.text).tag for r in images) if t.startswith("latest")), ""
        )
    )
    versions = sorted({r.version for r in per_pod.values()}, key=lambda v: parse(v) or _ZERO)
    return Component(
        name,
        version,
        source,
        tuple(pods + helm),
        versions=tuple(versions) if len(versions) > 1 else (),
        floating=floating,
        pulled=max((r.started for r in images), default="")[:10] if floating else "",
        digest="" if version else next((r.digest for r in images if r.digest), ""),
        commit=commit,
        release=release,
        commit_only=bool(starts) and not any(START_LINE.search(r.text)[1] for r in starts),
    )


_ZERO = Version(0, 0, 0)


def _notes(
    components: dict[str, Component],
    chart: str,
    app: str,
    values: dict[str, Any],
    releases: ReleaseData,
) -> list[Note]:
    notes: list[Note] = []
    operator = components["operator"]
    op = operator.parsed if operator.source in _OBSERVED else None
    app_v = parse(app)
    if chart and op is not None and app_v is not None and op != app_v:
        params = {"chart": chart, "app_version": app, "operator": str(op)}
        defaults = releases.chart(chart)
        tag = str(dig(values, "controller.image.tag") or "")
        # The line the chart installs: appVersion lies for the first v2 charts (1.7.7: 1.58.5).
        chart_line = defaults.line if defaults is not None else f"v{app_v.major}"
        if chart_line == "v1" and op.major >= 2:
            notes.append(Note("upgraded_by_the_book", params))
        elif tag and parse(tag) == op:
            notes.append(Note("values_pin_operator", params))
        elif defaults is not None and parse(defaults.operator) == op:
            notes.append(Note("chart_pins_older" if op < app_v else "chart_pins_other", params))
        else:
            notes.append(Note("operator_not_chart", params))
    hypervisor = components["hypervisor"]
    hv = hypervisor.parsed if hypervisor.source in _OBSERVED else None
    if op is not None and hv is not None and hv.major == op.major and hv < op:
        params = {"hypervisor": str(hv), "operator": str(op)}
        defaults = releases.chart(chart) if chart else None
        if defaults is not None and parse(defaults.hypervisor or "") == hv:
            params["chart"] = chart
            notes.append(Note("chart_keeps_old_hypervisor", params))
        else:
            notes.append(Note("hypervisor_older", params))
    for component in components.values():
        if component.versions:
            versions = ", ".join(component.versions)
            notes.append(Note("pods_disagree", {"component": component.name, "versions": versions}))
        tags = {r.where: r for r in component.readings if r.source == "image-tag" and r.version}
        for start in (r for r in component.readings if r.source == "start-line" and r.version):
            tag = tags.get(start.where)
            if tag is not None and parse(start.version) != parse(tag.version):
                params = {"component": component.name, "logged": start.version}
                params |= {"tag": tag.version, "where": start.where}
                notes.append(Note("start_line_not_tag", params))
    return notes
