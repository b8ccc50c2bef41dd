"""get and list: the served objects of each type, label and field selectors, pagination with
continue tokens, and the shapes a client asks for in Accept (objects, server-side Tables,
PartialObjectMetadata)."""

from __future__ import annotations

import base64
import binascii
import json
import threading
from dataclasses import dataclass
from typing import Any

from k8s.events import core_to_events_v1, events_v1_to_core
from k8s.helm_record import RELEASE_SECRET_TYPE
from k8s.selectors import (
    SelectorError,
    parse_field_selector,
    parse_label_selector,
    supported_fields,
)
from k8s.tables import build_table, partial_metadata
from k8s.types import CRD_KEY, SECRET_KEY, ResourceType

from .cluster import ClusterData
from .status import ApiError, bad_request, not_found, status_object
from .transport import JSON, Request, Response, media_ranges

_NONE: list[dict[str, Any]] = []  # one empty list, so its id is stable in view tokens
_EVENT_VIEWS = {
    ("", "events"): ("events.k8s.io", "events"),
    ("events.k8s.io", "events"): ("", "events"),
}


@dataclass(frozen=True)
class _View:
    """One type's served objects: sorted for lists, indexed for gets."""

    token: tuple[Any, ...]
    items: list[dict[str, Any]]
    by_ident: dict[tuple[str, str], dict[str, Any]]


class Objects:
    """What `data` serves of each type, and the get and list answers over it."""

    def __init__(self, data: ClusterData) -> None:
        self.data = data
        self._lock = threading.Lock()
        self._views: dict[tuple[str, str], _View] = {}
        self._view_lock = threading.Lock()
        self._rv: tuple[Any, str] = ((), "1")

    def items(self, rtype: ResourceType) -> list[dict[str, Any]]:
        """The objects served for a type, sorted by namespace then name."""
        return self._view(rtype).items

    def find(self, rtype: ResourceType, ns: str | None, name: str) -> dict[str, Any] | None:
        return self._view(rtype).by_ident.get((ns or "", name))

    def get(self, req: Request, rtype: ResourceType, ns: str | None, name: str) -> Response:
        obj = self.find(rtype, ns, name)
        if obj is None:
            raise not_found(rtype, name)
        return _shaped(req, rtype, [obj], single=True)

    def list(self, req: Request, rtype: ResourceType, ns: str | None) -> Response:
        try:
            labels = parse_label_selector(req.query.get("labelSelector"))
            fields = parse_field_selector(req.query.get("fieldSelector"))
            paths = _field_paths(self.data, rtype)
            fields.check_supported(paths)
        except SelectorError as err:
            raise bad_request(str(err)) from None
        items = [
            o
            for o in self.items(rtype)
            if (ns is None or _ns_name(o)[0] == ns)
            and labels.matches(o.get("metadata", {}).get("labels"))
            and fields.matches(o, paths)
        ]
        rv = self._resource_version()
        items, meta = _page(req, items, rv)
        return _shaped(req, rtype, items, single=False, list_meta=meta)

    def _view(self, rtype: ResourceType) -> _View:
        # Sorting thousands of objects on every request made the emulator, not the client,
        # the bottleneck of a large collection; the view is rebuilt only when the data changes.
        other = _EVENT_VIEWS.get(rtype.key)
        own = self.data.objects.get(rtype.key, _NONE)
        theirs = self.data.objects.get(other, _NONE) if other else _NONE
        token = (self.data.revision, id(own), len(own), id(theirs), len(theirs))
        view = self._views.get(rtype.key)
        if view is not None and view.token == token:
            return view
        with self._view_lock:  # one thread builds, the others wait for it
            view = self._views.get(rtype.key)
            if view is None or view.token != token:
                view = _build_view(rtype, own, theirs, token)
                self._views[rtype.key] = view
        return view

    def _resource_version(self) -> str:
        token = (self.data.revision, tuple(len(v) for v in self.data.objects.values()))
        with self._lock:
            if self._rv[0] == token:
                return self._rv[1]
        top = 0
        for objs in self.data.objects.values():
            for obj in objs:
                rv = str(obj.get("metadata", {}).get("resourceVersion", ""))
                if rv.isdigit():
                    top = max(top, int(rv))
        with self._lock:
            self._rv = (token, str(top or 1))
        return self._rv[1]


def crd_object(data: ClusterData, rtype: ResourceType) -> dict[str, Any] | None:
    """The CustomResourceDefinition that defines `rtype`, if the data has it."""
    want = f"{rtype.resource}.{rtype.group}"
    for crd in data.objects.get(CRD_KEY, []):
        if crd.get("metadata", {}).get("name") == want:
            return crd
    return None


def _build_view(
    rtype: ResourceType,
    own: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    token: tuple[Any, ...],
) -> _View:
    items = list(own)
    if rtype.key == SECRET_KEY:
        # Only Helm's release records (a scenario's helm/ files), whatever the data holds.
        items = [o for o in items if o.get("type") == RELEASE_SECRET_TYPE]
    if theirs:
        # One event store, two API views: each group also serves the other's events.
        convert = core_to_events_v1 if rtype.group else events_v1_to_core
        seen = {_ns_name(o) for o in own}
        items += [convert(o) for o in theirs if _ns_name(o) not in seen]
    by_ident = {_ns_name(o): o for o in items}
    return _View(token, sorted(items, key=_ns_name), by_ident)


def _field_paths(data: ClusterData, rtype: ResourceType) -> dict[str, str]:
    paths = supported_fields(rtype.group, rtype.resource)
    crd = crd_object(data, rtype)
    for version in (crd or {}).get("spec", {}).get("versions") or []:
        if version.get("name") == rtype.version:
            for sel in version.get("selectableFields") or []:
                path = str(sel.get("jsonPath", "")).lstrip(".")
                paths[path] = path
    return paths


def _page(
    req: Request, items: list[dict[str, Any]], rv: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    meta: dict[str, Any] = {"resourceVersion": rv}
    token = req.query.get("continue")
    if token:
        start_after = _decode_continue(token, rv)
        items = [o for o in items if _ns_name(o) > start_after]
    limit = req.int_param("limit")
    if limit is not None and limit > 0 and len(items) > limit:
        meta["continue"] = _encode_continue(rv, _ns_name(items[limit - 1]))
        meta["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    return items, meta


def _shaped(
    req: Request,
    rtype: ResourceType,
    items: list[dict[str, Any]],
    *,
    single: bool,
    list_meta: dict[str, Any] | None = None,
) -> Response:
    shape, meta_version = _wanted_shape(req.accept)
    meta_api = f"meta.k8s.io/{meta_version}"
    if shape == "table":
        include = req.query.get("includeObject") or "Metadata"
        if include not in ("None", "Metadata", "Object"):
            raise bad_request(f"includeObject: Unsupported value: {include!r}")
        table_meta = list_meta or {
            "resourceVersion": items[0]["metadata"].get("resourceVersion", "")
        }
        return Response.json(
            200,
            build_table(
                rtype, items, include_object=include, list_meta=table_meta, api_version=meta_api
            ),
        )
    if shape == "partial":
        partial = [partial_metadata(o, meta_api) for o in items]
        if single:
            return Response.json(200, partial[0])
        return Response.json(
            200,
            {
                "kind": "PartialObjectMetadataList",
                "apiVersion": meta_api,
                "metadata": list_meta or {},
                "items": partial,
            },
        )
    if single:
        return Response.json(200, items[0])
    return Response.json(
        200,
        {
            "kind": f"{rtype.kind}List",
            "apiVersion": rtype.api_version,
            "metadata": list_meta or {},
            "items": items,
        },
    )


def _wanted_shape(accept: str) -> tuple[str, str]:
    """("table"|"partial"|"json", meta.k8s.io version) chosen from the Accept header."""
    for mtype, params in media_ranges(accept or JSON):
        if mtype not in (JSON, "*/*", "application/*"):
            continue  # protobuf, yaml: we only speak JSON and fall through to it
        if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            if params.get("as") == "Table":
                return "table", params["v"]
            if params.get("as", "").startswith("PartialObjectMetadata"):
                return "partial", params["v"]
            continue
        if not params.get("as"):
            return "json", "v1"
    return "json", "v1"


def _ns_name(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _encode_continue(rv: str, last: tuple[str, str]) -> str:
    raw = json.dumps({"v": "emulator/1", "rv": rv, "start": list(last)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str, rv: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        start = data["start"]
        last = (str(start[0]), str(start[1]))
        token_rv = str(data["rv"])
    except (binascii.Error, ValueError, KeyError, IndexError, TypeError) as exc:
        raise bad_request(f"continue key is not valid: {exc}") from None
    if token_rv != rv:
        # The data changed since the first page: the API answers 410 Expired.
        raise ApiError(
            status_object(
                410,
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter.",
                reason="Expired",
            )
        )
    return last
