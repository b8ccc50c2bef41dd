"""The bundle's archive: a tar stream compressed with zstd, written and read one way.

Both halves of the contract use it, so it lives with the schemas (neither half may import the
other): tf-collect writes bundles and redacts existing archives (`tf-collect redact` also reads
.tar, .tar.gz and unpacked directories), tf-analyze reads bundles. Reading extracts nothing to disk: members are read into memory, one at a time,
under one size policy (`Limits`), so a hostile archive can neither write anywhere nor
exhaust memory (decompression bombs):

- a member of more than 256 MiB is refused (its bytes are never read);
- an archive of more than 200,000 members, or that unpacks to more than 1 GiB, is refused.

A reader that must not stop at one bad member (the offline redactor, whose input may be any
archive) passes `skip`: an unsafe or oversized member is then handed to it and left out,
while what concerns the whole archive (its count and total size, a corrupt or truncated
stream) is still refused.

This module holds the one import of zstd: the standard library's `compression.zstd` from
Python 3.14 on, the `backports.zstd` package (the same API) before.
"""

from __future__ import annotations

import contextlib
import enum
import gzip
import os
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, BinaryIO

try:  # Python 3.14+
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the interpreter
    from backports import zstd  # type: ignore[no-redef]

__all__ = ["DEFAULT_LIMITS", "ArchiveError", "Limits", "Problem", "members", "tar_writer", "zstd"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_LEVEL = 10  # bundles are mailed: their size matters more than the seconds it costs


class Problem(enum.Enum):
    """Why an archive is refused (tf-analyze gives each its own exit code)."""

    NOT_AN_ARCHIVE = "not an archive"  # not zstd, not tar, unreadable or empty
    TRUNCATED = "truncated"  # the compressed stream or the tar ends early
    UNSAFE = "unsafe"  # absolute or '..' member paths, links, devices, duplicates
    TOO_LARGE = "too large"  # over a cap of `Limits`


class ArchiveError(Exception):
    """An archive that cannot be read; the message says why in one line. For one member's
    problem, `member` is its name as the archive gives it and `why` what is wrong with it."""

    def __init__(self, message: str, problem: Problem, member: str = "", why: str = "") -> None:
        super().__init__(message)
        self.problem = problem
        self.member = member
        self.why = why


def _bad_member(name: str, why: str, problem: Problem = Problem.UNSAFE) -> ArchiveError:
    return ArchiveError(f"member {name!r} {why}", problem, name, why)


@dataclass(frozen=True)
class Limits:
    """The size policy (see the module's docstring); the tests and the fuzzer lower it."""

    member_bytes: int = 256 * 1024**2
    total_bytes: int = 1024**3
    members: int = 200_000


DEFAULT_LIMITS = Limits()
Skip = Callable[[ArchiveError], None]


def members(
    source: Path,
    limits: Limits = DEFAULT_LIMITS,
    *,
    kind: str = "tar.zst",
    skip: Skip | None = None,
) -> Iterator[tuple[str, bytes]]:
    """The members of an archive file of `kind` (tar.zst, tar.gz or tar) or of an unpacked
    directory, each checked as it is read, in archive order (a directory's in sorted order), by
    their relative POSIX paths. Without `skip`, any problem is an ArchiveError."""
    refuse = _refuser(skip)
    if source.is_dir():
        yield from _read_dir(source, limits, refuse)
        return
    if not source.exists():
        raise ArchiveError(f"{source}: no such file or directory", Problem.NOT_AN_ARCHIVE)
    with open(source, "rb") as raw:
        _check_magic(source, raw.read(4), kind)
        raw.seek(0)
        if kind == "tar.zst":
            yield from _read_tar(source, zstd.ZstdFile(raw, "rb"), limits, refuse, "zstd")
        elif kind == "tar.gz":
            yield from _read_tar(source, gzip.GzipFile(fileobj=raw), limits, refuse, "gzip")
        else:
            yield from _read_tar(source, raw, limits, refuse, "")


def check_member_name(name: str) -> str:
    """The normalised member name, or ArchiveError for names that could escape."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _bad_member(name, "has an absolute path")
    if not {"", ".", ".."} & set(name.split("/")):
        return name  # already normal, as most are: what the parsing below gives back
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise _bad_member(name, "contains '..'")
    clean = "/".join(p for p in parts if p not in ("", "."))
    if not clean:
        raise _bad_member(name, "has an empty path")
    return clean


def _refuser(skip: Skip | None) -> Callable[[ArchiveError], None]:
    def refuse(error: ArchiveError) -> None:
        if skip is None:
            raise error
        skip(error)

    return refuse


def _check_magic(path: Path, head: bytes, kind: str) -> None:
    if not head:
        raise ArchiveError(f"{path}: empty file, not a bundle", Problem.NOT_AN_ARCHIVE)
    if kind == "tar.zst" and head[:2] == GZIP_MAGIC:
        raise ArchiveError(
            f"{path}: a gzip archive, not a zstd-compressed bundle", Problem.NOT_AN_ARCHIVE
        )
    if kind == "tar.zst" and head != ZSTD_MAGIC:
        raise ArchiveError(
            f"{path}: not a zstd-compressed bundle (.tar.zst)", Problem.NOT_AN_ARCHIVE
        )
    if kind == "tar.gz" and head[:2] != GZIP_MAGIC:
        raise ArchiveError(f"{path}: not a gzip-compressed archive", Problem.NOT_AN_ARCHIVE)


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
            raise ArchiveError(
                f"a tar header claims {size} bytes, over the {self._cap}-byte member cap",
                Problem.TOO_LARGE,
            )
        data = self._stream.read(size)
        self._pos += len(data)
        return data

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET or pos < self._pos:
            raise tarfile.ReadError("a seek backwards in the tar stream")
        while self._pos < pos:  # past a member left out: in pieces, whatever the cap
            data = self._stream.read(min(pos - self._pos, 1 << 20))
            if not data:
                break
            self._pos += len(data)
        return self._pos


def _read_tar(
    path: Path,
    decompressed: BinaryIO,
    limits: Limits,
    refuse: Callable[[ArchiveError], None],
    compression: str,
) -> Iterator[tuple[str, bytes]]:
    seen: set[str] = set()
    total = skipped = 0
    inside = f" inside the {compression} stream" if compression else ""
    try:
        with (
            decompressed,
            tarfile.open(fileobj=_Forward(decompressed, limits.member_bytes), mode="r:") as tar,
        ):
            stream = tar.fileobj
            for info in tar:
                try:
                    name = check_member_name(info.name)
                    if info.isdir():
                        continue
                    link = info.issym() or info.islnk()
                    _check_member(name, link, info.isreg(), info.size, limits)
                    if name in seen:
                        raise _bad_member(name, "appears twice")
                except ArchiveError as exc:
                    refuse(exc)
                    skipped += 1
                    continue
                total = _check_total(info.size, total, len(seen), limits)
                if info.sparse is None:
                    stream.seek(info.offset_data)
                    data = stream.read(info.size)
                    if len(data) != info.size:  # what tarfile's own member reader says
                        raise tarfile.ReadError("unexpected end of data")
                else:
                    fh = tar.extractfile(info)
                    data = fh.read(limits.member_bytes + 1) if fh else b""
                    if len(data) != info.size:
                        raise ArchiveError(
                            f"{path}: member {name!r} is cut short", Problem.TRUNCATED
                        )
                seen.add(name)
                yield name, data
    except EOFError as exc:
        raise ArchiveError(
            f"{path}: the compressed stream ends early (truncated download?)", Problem.TRUNCATED
        ) from exc
    except (zstd.ZstdError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveError(
            f"{path}: corrupt {compression} data ({exc})", Problem.TRUNCATED
        ) from exc
    except tarfile.ReadError as exc:
        # tarfile reports a stream that stops inside a header or block this way too.
        if seen:
            raise ArchiveError(
                f"{path}: the tar stream ends early ({exc})", Problem.TRUNCATED
            ) from exc
        raise ArchiveError(f"{path}: not a tar archive{inside}", Problem.NOT_AN_ARCHIVE) from exc
    if not seen and not skipped:
        raise ArchiveError(f"{path}: the archive holds no files", Problem.NOT_AN_ARCHIVE)


def _read_dir(
    root: Path, limits: Limits, refuse: Callable[[ArchiveError], None]
) -> Iterator[tuple[str, bytes]]:
    count = total = skipped = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for d in dirnames:
            if (Path(dirpath) / d).is_symlink():  # os.walk does not descend into it
                skipped += 1
                refuse(_bad_member((Path(dirpath) / d).relative_to(root).as_posix(), "is a link"))
        for fname in sorted(filenames):
            full = Path(dirpath) / fname
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            try:
                _check_member(
                    rel, stat.S_ISLNK(st.st_mode), stat.S_ISREG(st.st_mode), st.st_size, limits
                )
            except ArchiveError as exc:
                refuse(exc)
                skipped += 1
                continue
            total = _check_total(st.st_size, total, count, limits)
            with open(full, "rb") as fh:
                data = fh.read(limits.member_bytes + 1)
            count += 1
            yield rel, data
    if not count and not skipped:
        raise ArchiveError(f"{root}: the directory holds no files", Problem.NOT_AN_ARCHIVE)


def _check_member(name: str, link: bool, regular: bool, size: int, limits: Limits) -> None:
    if link:
        raise _bad_member(name, "is a link")
    if not regular:
        raise _bad_member(name, "is a special file")
    if size > limits.member_bytes:
        raise _bad_member(
            name, f"is {size} bytes, over the {limits.member_bytes}-byte cap", Problem.TOO_LARGE
        )


def _check_total(size: int, total: int, count: int, limits: Limits) -> int:
    if count >= limits.members:
        raise ArchiveError(f"more than {limits.members} members", Problem.TOO_LARGE)
    total += size
    if total > limits.total_bytes:
        raise ArchiveError(
            f"the bundle unpacks to more than {limits.total_bytes} bytes (cap)", Problem.TOO_LARGE
        )
    return total


@contextlib.contextmanager
def tar_writer(
    raw: IO[bytes], kind: str = "tar.zst", mtime: int = 0
) -> Iterator[Callable[[str, IO[bytes]], None]]:
    """A tar stream of `kind` written to `raw`, the same bytes for the same members; yields
    `add(name, fh)`, which writes each member as it is added, owned by root with mode 0644 and
    the given mtime (a bundle's creation time; 0 for an archive redacted offline)."""
    with contextlib.ExitStack() as stack:
        stream: Any = raw
        if kind == "tar.zst":
            stream = stack.enter_context(zstd.ZstdFile(raw, "wb", level=ZSTD_LEVEL))
        elif kind == "tar.gz":
            stream = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="wb", mtime=0))
        tar = stack.enter_context(
            tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT)
        )

        def add(name: str, fh: IO[bytes]) -> None:
            fh.seek(0, os.SEEK_END)
            info = tarfile.TarInfo(name)
            info.size = fh.tell()
            fh.seek(0)
            info.mtime = mtime
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, fh)

        yield add
