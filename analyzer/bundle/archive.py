"""Reading a bundle's members safely, from a ``.tar.zst`` stream or an unpacked directory.

Nothing is extracted to disk: members are read into memory under hard caps, so a hostile
bundle can neither write outside anything nor exhaust memory (decompression bombs). Members
come one at a time, so a reader can keep what it parsed and drop the bytes.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..errors import BundleError, ExitCode

try:  # Python 3.14+
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the interpreter
    from backports import zstd  # type: ignore[no-redef]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Limits:
    member_bytes: int = 256 * 1024**2
    total_bytes: int = 1024**3
    members: int = 200_000


DEFAULT_LIMITS = Limits()


def members(source: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[tuple[str, bytes]]:
    """The members of a ``.tar.zst`` bundle or an unpacked directory, each checked as it is
    read, in archive order, by their relative POSIX paths."""
    if source.is_dir():
        yield from _read_dir(source, limits)
        return
    if not source.exists():
        raise BundleError(f"{source}: no such file or directory")
    with open(source, "rb") as raw:
        _check_magic(source, raw.read(4))
        raw.seek(0)
        yield from _read_tar_zst(source, raw, limits)


def check_member_name(name: str) -> str:
    """The normalised member name, or BundleError for names that could escape."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise BundleError(f"member {name!r} has an absolute path", ExitCode.UNSAFE)
    if not {"", ".", ".."} & set(name.split("/")):
        return name  # already normal, as most are: what the parsing below gives back
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise BundleError(f"member {name!r} contains '..'", ExitCode.UNSAFE)
    clean = "/".join(p for p in parts if p not in ("", "."))
    if not clean:
        raise BundleError(f"member {name!r} has an empty path", ExitCode.UNSAFE)
    return clean


def _check_magic(path: Path, head: bytes) -> None:
    if not head:
        raise BundleError(f"{path}: empty file, not a bundle")
    if head[:2] == GZIP_MAGIC:
        raise BundleError(f"{path}: a gzip archive, not a zstd-compressed bundle")
    if head != ZSTD_MAGIC:
        raise BundleError(f"{path}: not a zstd-compressed bundle (.tar.zst)")


class _Forward:
    """The decompressed tar stream, read forward only, for tarfile's seekable mode: tarfile
    reads the headers and a member's data is taken in one read, without the copying of the
    stream mode's block buffer. No single read is larger than the member cap: tarfile reads
    a pax or long-name header whole, whatever size it claims."""

    def __init__(self, stream: BinaryIO, cap: int) -> None:
        self._stream = stream
        self._cap = cap
        self._pos = 0

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        if not 0 <= size <= self._cap:
            raise BundleError(
                f"a tar header claims {size} bytes, over the {self._cap}-byte member cap",
                ExitCode.TOO_LARGE,
            )
        data = self._stream.read(size)
        self._pos += len(data)
        return data

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET or pos < self._pos:
            raise tarfile.ReadError("a seek backwards in the tar stream")
        while self._pos < pos and self.read(min(pos - self._pos, 1 << 20)):
            pass
        return self._pos


def _read_tar_zst(path: Path, compressed: BinaryIO, limits: Limits) -> Iterator[tuple[str, bytes]]:
    seen: set[str] = set()
    total = 0
    try:
        with (
            zstd.ZstdFile(compressed, "rb") as zf,
            tarfile.open(fileobj=_Forward(zf, limits.member_bytes), mode="r:") as tar,
        ):
            stream = tar.fileobj
            for info in tar:
                name = check_member_name(info.name)
                if info.isdir():
                    continue
                if not info.isreg():
                    what = "link" if (info.issym() or info.islnk()) else "special file"
                    raise BundleError(f"member {name!r} is a {what}", ExitCode.UNSAFE)
                if name in seen:
                    raise BundleError(f"member {name!r} appears twice", ExitCode.UNSAFE)
                total = _check_size(name, info.size, total, len(seen), limits)
                if info.sparse is None:
                    stream.seek(info.offset_data)
                    data = stream.read(info.size)
                    if len(data) != info.size:  # what tarfile's own member reader says
                        raise tarfile.ReadError("unexpected end of data")
                else:
                    fh = tar.extractfile(info)
                    data = fh.read(limits.member_bytes + 1) if fh else b""
                    if len(data) != info.size:
                        raise BundleError(
                            f"{path}: member {name!r} is cut short", ExitCode.TRUNCATED
                        )
                seen.add(name)
                yield name, data
    except EOFError as exc:
        raise BundleError(
            f"{path}: the compressed stream ends early (truncated download?)",
            ExitCode.TRUNCATED,
        ) from exc
    except zstd.ZstdError as exc:
        raise BundleError(f"{path}: corrupt zstd data ({exc})", ExitCode.TRUNCATED) from exc
    except tarfile.ReadError as exc:
        # tarfile reports a stream that stops inside a header or block this way too.
        if seen:
            raise BundleError(
                f"{path}: the tar stream ends early ({exc})", ExitCode.TRUNCATED
            ) from exc
        raise BundleError(f"{path}: not a tar archive inside the zstd stream") from exc
    if not seen:
        raise BundleError(f"{path}: the archive holds no files")


def _read_dir(root: Path, limits: Limits) -> Iterator[tuple[str, bytes]]:
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for d in dirnames:
            if (Path(dirpath) / d).is_symlink():
                rel = (Path(dirpath) / d).relative_to(root).as_posix()
                raise BundleError(f"member {rel!r} is a link", ExitCode.UNSAFE)
        for fname in sorted(filenames):
            full = Path(dirpath) / fname
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise BundleError(f"member {rel!r} is a link", ExitCode.UNSAFE)
            if not stat.S_ISREG(st.st_mode):
                raise BundleError(f"member {rel!r} is a special file", ExitCode.UNSAFE)
            total = _check_size(rel, st.st_size, total, count, limits)
            with open(full, "rb") as fh:
                data = fh.read(limits.member_bytes + 1)
            count += 1
            yield rel, data
    if not count:
        raise BundleError(f"{root}: the directory holds no files")


def _check_size(name: str, size: int, total: int, count: int, limits: Limits) -> int:
    if count >= limits.members:
        raise BundleError(f"more than {limits.members} members", ExitCode.TOO_LARGE)
    if size > limits.member_bytes:
        raise BundleError(
            f"member {name!r} is {size} bytes, over the {limits.member_bytes}-byte cap",
            ExitCode.TOO_LARGE,
        )
    total += size
    if total > limits.total_bytes:
        raise BundleError(
            f"the bundle unpacks to more than {limits.total_bytes} bytes (cap)", ExitCode.TOO_LARGE
        )
    return total
