"""TensorFusion's versions: one parser and one order for git tags, image tags and charts."""

from __future__ import annotations

import pytest

from k8s.semver import Version, compare, in_range, parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.48.6", Version(1, 48, 6)),
        ("v1.48.6", Version(1, 48, 6)),  # git tags and v2-era client/worker images
        ("2.0.0-rc.1", Version(2, 0, 0, ("rc", 1))),
        ("2.15.0+dirty", Version(2, 15, 0)),  # build metadata does not count
        ("1.9.0_amd64", Version(1, 9, 0)),  # the chart-0.1.0 hypervisor image
        (" 2.17.0 ", Version(2, 17, 0)),
    ],
)
def test_versions_read_alike_whatever_their_spelling(text: str, expected: Version) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text", ["latest", "latest-alpine", "", None, "main", "1.48", "01.2.3", "sha256:ab", "v"]
)
def test_what_names_no_version(text: str | None) -> None:
    assert parse(text) is None


@pytest.mark.parametrize(
    ("a", "b", "order"),
    [
        ("1.43.4", "1.43.7", -1),
        ("1.48.6", "v1.48.6", 0),
        ("1.9.0", "1.10.0", -1),  # numbers, not strings
        ("2.0.0-rc.1", "2.0.0", -1),  # a pre-release before its release
        ("2.0.0-alpha", "2.0.0-alpha.1", -1),
        ("2.0.0-alpha.1", "2.0.0-alpha.beta", -1),  # numeric before alphanumeric
        ("2.0.0-beta.2", "2.0.0-beta.11", -1),
        ("2.0.0-rc.1", "2.0.0-beta.11", 1),
        ("1.65.8", "2.0.0", -1),  # the v1 line, however late, is below v2
        ("2.15.0+a", "2.15.0+b", 0),
    ],
)
def test_semantic_version_order(a: str, b: str, order: int) -> None:
    assert compare(a, b) == order
    assert compare(b, a) == -order


def test_compare_refuses_what_is_not_a_version() -> None:
    with pytest.raises(ValueError, match="latest"):
        compare("latest", "1.0.0")


def test_ranges_are_half_open_and_lines_are_majors() -> None:
    v = parse("1.49.15")
    assert v is not None and v.line == "v1"
    assert in_range(v, None, "1.49.16") and not in_range(v, None, "1.49.15")
    assert in_range(v, "1.49.15", None) and not in_range(v, "1.49.16", None)
    assert not in_range(parse("2.6.0-rc.1"), "2.6.0", None)
