"""Discovery: which groups, versions and resources the data serves, in the plain documents
(/api, /apis, /apis/GROUP, the resource lists) and in aggregated discovery (apidiscovery v2)."""

from __future__ import annotations

from typing import Any

from k8s.types import CATEGORIES, SUBRESOURCES, ResourceType, group_rank, version_priority

from .cluster import ClusterData
from .execs import EXEC_SUBRESOURCE, POD_KEY
from .objects import crd_object
from .status import no_such_path
from .transport import JSON, Response, media_ranges

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def core_versions(data: ClusterData, accept: str, *, aggregated: bool, address: str) -> Response:
    """/api: the core group's versions (`address`: host:port clients reach the server at)."""
    if aggregated and (v := _wants_aggregated(accept)):
        return _aggregated(data, [""], v)
    return Response.json(
        200,
        {
            "kind": "APIVersions",
            "versions": _versions_of(data, "") or ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
        },
    )


def group_list(data: ClusterData, accept: str, *, aggregated: bool) -> Response:
    """/apis: every named group."""
    if aggregated and (v := _wants_aggregated(accept)):
        return _aggregated(data, _named_groups(data), v)
    groups = [_group_entry(data, g) for g in _named_groups(data)]
    return Response.json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})


def api_group(data: ClusterData, group: str) -> Response:
    """/apis/GROUP: one named group's versions."""
    if group not in _groups(data) or not group:
        raise no_such_path()
    return Response.json(200, {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(data, group)})


def resource_list(data: ClusterData, group: str, version: str) -> Response:
    """/api/VERSION or /apis/GROUP/VERSION: the resources served there, subresources too."""
    types = _groups(data).get(group, {}).get(version)
    if not types:
        raise no_such_path()
    resources = []
    for rtype in sorted(types, key=lambda t: t.resource):
        resources.append(_api_resource(data, rtype))
        for sub, (kind, verbs) in _subresources(rtype).items():
            resources.append(
                {
                    "name": f"{rtype.resource}/{sub}",
                    "singularName": "",
                    "namespaced": rtype.namespaced,
                    "kind": kind,
                    "verbs": list(verbs),
                }
            )
    gv = f"{group}/{version}" if group else version
    return Response.json(
        200,
        {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": resources,
        },
    )


def _groups(data: ClusterData) -> dict[str, dict[str, list[ResourceType]]]:
    out: dict[str, dict[str, list[ResourceType]]] = {}
    for rtype in data.types.values():
        out.setdefault(rtype.group, {}).setdefault(rtype.version, []).append(rtype)
    return out


def _versions_of(data: ClusterData, group: str) -> list[str]:
    return sorted(_groups(data).get(group, {}), key=version_priority)


def _group_entry(data: ClusterData, group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions_of(data, group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def _named_groups(data: ClusterData) -> list[str]:
    return sorted((g for g in _groups(data) if g), key=group_rank)


def _categories(data: ClusterData, rtype: ResourceType) -> tuple[str, ...]:
    if rtype.key in CATEGORIES:
        return CATEGORIES[rtype.key]
    crd = crd_object(data, rtype)
    return tuple((crd or {}).get("spec", {}).get("names", {}).get("categories") or ())


def _api_resource(data: ClusterData, rtype: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rtype.resource,
        "singularName": rtype.singular or rtype.kind.lower(),
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if categories := _categories(data, rtype):
        entry["categories"] = list(categories)
    return entry


def _aggregated(data: ClusterData, groups: list[str], disco_version: str) -> Response:
    items = []
    by_group = _groups(data)
    for group in groups:
        versions = []
        for version in sorted(by_group.get(group, {}), key=version_priority):
            types = sorted(by_group[group][version], key=lambda t: t.resource)
            versions.append(
                {
                    "version": version,
                    "resources": [_aggregated_resource(data, t) for t in types],
                    "freshness": "Current",
                }
            )
        meta: dict[str, Any] = {"creationTimestamp": None}
        if group:
            meta["name"] = group
        items.append({"metadata": meta, "versions": versions})
    body = {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{disco_version}",
        "metadata": {},
        "items": items,
    }
    ctype = AGGREGATED_V2.replace("v=v2", f"v={disco_version}")
    return Response.json(200, body, ctype)


def _aggregated_resource(data: ClusterData, rtype: ResourceType) -> dict[str, Any]:
    kind = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    entry: dict[str, Any] = {
        "resource": rtype.resource,
        "responseKind": kind,
        "scope": "Namespaced" if rtype.namespaced else "Cluster",
        "singularResource": rtype.singular or rtype.kind.lower(),
        "verbs": list(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if categories := _categories(data, rtype):
        entry["categories"] = list(categories)
    subs = [
        {"subresource": sub, "responseKind": {**kind, "kind": sub_kind}, "verbs": list(verbs)}
        for sub, (sub_kind, verbs) in _subresources(rtype).items()
    ]
    if subs:
        entry["subresources"] = subs
    return entry


def _subresources(rtype: ResourceType) -> dict[str, tuple[str, tuple[str, ...]]]:
    # pods/exec is listed like a real server's, but answered by execs.py: it is not a GET.
    subs = dict(SUBRESOURCES.get(rtype.key, {}))
    if rtype.key == POD_KEY:
        subs["exec"] = EXEC_SUBRESOURCE
    return subs


def _wants_aggregated(accept: str) -> str | None:
    for mtype, params in media_ranges(accept):
        if (
            mtype == JSON
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("as") == "APIGroupDiscoveryList"
            and params.get("v") in ("v2", "v2beta1")
        ):
            return params["v"]
    return None
