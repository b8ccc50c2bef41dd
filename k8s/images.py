"""Container image references as Kubernetes writes them: `[registry/]path[:tag][@digest]`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageRef:
    registry: str  # "" when the reference names none (Docker Hub)
    path: str  # tensorfusion/tensor-fusion-operator
    tag: str  # "" when the reference has none (a digest, or Docker's implied latest)
    digest: str  # sha256:..., "" when none

    @property
    def name(self) -> str:
        """The last part of the path: tensor-fusion-operator."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def floating(self) -> bool:
        """A tag that moves: latest, latest-alpine, or none at all without a digest."""
        return self.tag.startswith("latest") or (not self.tag and not self.digest)


def parse_image(ref: str) -> ImageRef:
    """Split an image reference (the spec's `image`, a status's `image` or `imageID`; a
    runtime prefix such as docker-pullable:// is dropped)."""
    text = ref.split("://", 1)[-1].strip()
    if text.startswith("sha256:"):  # containerd's imageID: the image's digest alone
        return ImageRef("", "", "", text)
    text, _, digest = text.partition("@")
    first, slash, rest = text.partition("/")
    registry = ""
    # The first part is a registry when it looks like a host (a dot, a port, localhost).
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, text = first, rest
    path, colon, tag = text.rpartition(":")
    if not colon or "/" in tag:
        path, tag = text, ""
    if registry in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        registry = ""
    if not registry and path.startswith("library/"):
        path = path.removeprefix("library/")
    return ImageRef(registry, path, tag, digest)
