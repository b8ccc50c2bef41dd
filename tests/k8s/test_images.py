"""Image references as pods and container statuses write them."""

from __future__ import annotations

import pytest

from k8s.images import ImageRef, parse_image


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("tensorfusion/tensor-fusion-operator:1.48.6",
         ImageRef("", "tensorfusion/tensor-fusion-operator", "1.48.6", "")),
        ("docker.io/timberio/vector:latest-alpine", ImageRef("", "timberio/vector", "latest-alpine", "")),
        ("docker.io/library/busybox", ImageRef("", "busybox", "", "")),
        ("localhost:5000/tf/op", ImageRef("localhost:5000", "tf/op", "", "")),
        ("registry.cn-hangzhou.aliyuncs.com/tf/op:v2.15.0@sha256:ab",
         ImageRef("registry.cn-hangzhou.aliyuncs.com", "tf/op", "v2.15.0", "sha256:ab")),
        ("docker-pullable://tensorfusion/tensor-fusion-operator@sha256:ff",
         ImageRef("", "tensorfusion/tensor-fusion-operator", "", "sha256:ff")),
        ("sha256:349ca572", ImageRef("", "", "", "sha256:349ca572")),  # containerd's imageID
    ],
)  # fmt: skip
def test_references_split_into_their_parts(ref: str, expected: ImageRef) -> None:
    assert parse_image(ref) == expected


def test_floating_tags() -> None:
    assert parse_image("greptime/greptimedb:latest").floating
    assert parse_image("timberio/vector:latest-alpine").floating
    assert parse_image("busybox").floating  # no tag means latest
    assert not parse_image("tensorfusion/tensor-fusion-operator@sha256:ff").floating
    assert not parse_image("tensorfusion/tensor-fusion-operator:2.17.0").floating
