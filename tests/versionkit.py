"""A bundle at another version: the same cluster, its TensorFusion images retagged, their start
lines saying the new release (and its commit), the Helm release another chart. The known-bug
tests hold each entry to its ranges this way without a scenario per version."""

from __future__ import annotations

import json
import re
from typing import Any

from scenarioloader import START_LINE, retag_value, retagged_containers, start_line

from collector.bundle import dump_json

Members = dict[str, bytes]
_LOG = re.compile(r"logs/([^/]+)/([^/]+)/([^/.]+)(?:\.[^/]*)?\.log")


def retag(
    members: Members,
    images: dict[str, str],
    *,
    helm: dict[str, Any] | None = None,
    start_lines: bool = True,
) -> Members:
    """`members` with every image of a repository in `images` on its new tag, the start lines
    of the containers that run it rewritten (or dropped without `start_lines`: a bundle whose
    version nothing names), and `helm` keys (chart, values) replacing the release's."""
    out = dict(members)
    retagged: dict[tuple[str, str, str], str] = {}
    for name, data in members.items():
        if not (name.startswith("objects/") and name.endswith(".json")):
            continue
        listing = json.loads(data)
        retag_value(listing, images)
        for item in listing.get("items") or []:
            retagged.update(retagged_containers(item, images))
        out[name] = dump_json(listing)
    for name, data in members.items():
        match = _LOG.fullmatch(name)
        tag = retagged.get(match.groups()) if match else None
        if tag is None:
            continue
        text = data.decode("utf-8")
        if start_lines:
            text = START_LINE.sub(lambda m, t=tag: start_line(m, t), text)
        else:
            text = "".join(line for line in text.splitlines(True) if not START_LINE.search(line))
        out[name] = text.encode("utf-8")
    if helm is not None:
        for name in [n for n in members if n.startswith("helm/")]:
            out[name] = dump_json({**json.loads(members[name]), **helm})
    return out
