"""TensorFusion's releases as data: which images each chart deploys by default
(rules/_charts.yaml) and which commit each release tag names (rules/_releases.yaml). Both are
generated from TensorFusion's own repository (scripts/make_release_data.py) and checked against
schemas/release-data.schema.json when they load."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

import tf_support_schemas as schemas
from k8s.semver import Version, parse
from tf_support_schemas.manual import Loader

from ..errors import RuleLoadError

CHARTS_FILE = "_charts.yaml"
RELEASES_FILE = "_releases.yaml"


@dataclass(frozen=True)
class Chart:
    chart: str
    app_version: str
    published: str
    operator: str  # the operator image tag it deploys by default ("latest" or a version)
    hypervisor: str | None  # the hypervisor tag it renders; None: the user's cluster names it

    @property
    def line(self) -> str:
        """The release line it installs: its operator's; for an operator on `latest`, v2 where
        the chart renders the TensorFusionCluster (the v2 charts from 1.7.7 do), else v1."""
        version = parse(self.operator)
        if version is not None:
            return version.line
        return "v2" if self.hypervisor is not None else "v1"


@dataclass(frozen=True)
class ReleaseData:
    charts: tuple[Chart, ...]  # oldest first
    tags: dict[str, str]  # commit -> release tag (v1.48.6)
    dates: dict[str, str]  # release tag -> date

    def chart(self, version: str) -> Chart | None:
        wanted = parse(version)
        return next((c for c in self.charts if parse(c.chart) == wanted), None)

    def tag_of(self, commit: str) -> str:
        """The release tag whose commit `commit` is (a full hash or a prefix of 7 or more);
        "" when it is no release's."""
        commit = commit.lower()
        if len(commit) < 7:
            return ""
        return next((t for c, t in self.tags.items() if c.startswith(commit)), "")

    def first_chart(self, line: str, fixed: Version) -> Chart | None:
        """The oldest chart whose default operator is on `line` and at least `fixed`."""
        for chart in self.charts:
            version = parse(chart.operator)
            if version is not None and version.line == line and version >= fixed:
                return chart
        return None

    def last_chart(self, line: str) -> Chart | None:
        """The newest chart whose default operator is on `line`."""
        on_line = [c for c in self.charts if parse(c.operator) and c.line == line]
        return on_line[-1] if on_line else None


@cache
def load_releases(root: Path) -> ReleaseData:
    charts = _read(root / CHARTS_FILE, "charts")
    releases = _read(root / RELEASES_FILE, "releases")
    return ReleaseData(
        charts=tuple(
            Chart(c["chart"], c["appVersion"], c["published"], c["operator"], c["hypervisor"])
            for c in sorted(charts, key=lambda c: parse(c["chart"]) or Version(0, 0, 0))
        ),
        tags={r["commit"]: r["tag"] for r in releases},
        dates={r["tag"]: r["date"] for r in releases},
    )


def _read(path: Path, key: str) -> list[dict[str, str]]:
    if not path.is_file():
        raise RuleLoadError(f"{path}: missing (TensorFusion release data)")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    except yaml.YAMLError as exc:
        raise RuleLoadError(f"{path}: invalid YAML: {exc}") from exc
    problem = schemas.first_error("release-data", data)
    if problem is None and key not in data:
        problem = f"(root): expected {key!r}"
    if problem:
        raise RuleLoadError(f"{path}: {problem}")
    return list(data[key])
