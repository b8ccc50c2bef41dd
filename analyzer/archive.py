"""Reading a bundle's members safely, from a ``.tar.zst`` stream or an unpacked directory.

Nothing is extracted to disk: members are read into memory under hard caps, so a hostile
bundle can neither write outside anything nor exhaust memory (decompression bombs).
"""

from __future__ import annotations

import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import BundleError, ExitCode

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


def read_members(source: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Every regular member of a bundle, by its relative POSIX path."""
    if source.is_dir():
        return _read_dir(source, limits)
    if not source.exists():
        raise BundleError(f"{source}: no such file or directory")
    return _read_tar_zst(source, limits)


def check_member_name(name: str) -> str:
    """The normalised member name, or BundleError for names that could escape."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise BundleError(f"member {name!r} has an absolute path", ExitCode.UNSAFE)
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise BundleError(f"member {name!r} contains '..'", ExitCode.UNSAFE)
    clean = "/".join(p for p in parts if p not in ("", "."))
    if not clean:
        raise BundleError(f"member {name!r} has an empty path", ExitCode.UNSAFE)
    return clean


def _read_tar_zst(path: Path, limits: Limits) -> dict[str, bytes]:
    with open(path, "rb") as raw:
        head = raw.read(4)
        if not head:
            raise BundleError(f"{path}: empty file, not a bundle")
        if head[:2] == GZIP_MAGIC:
            raise BundleError(f"{path}: a gzip archive, not a zstd-compressed bundle")
        if head != ZSTD_MAGIC:
            raise BundleError(f"{path}: not a zstd-compressed bundle (.tar.zst)")
        raw.seek(0)
        members: dict[str, bytes] = {}
        total = 0
        try:
            with zstd.ZstdFile(raw, "rb") as zf, tarfile.open(fileobj=zf, mode="r|") as tar:
                for info in tar:
                    name = check_member_name(info.name)
                    if info.isdir():
                        continue
                    if not info.isreg():
                        what = "link" if (info.issym() or info.islnk()) else "special file"
                        raise BundleError(f"member {name!r} is a {what}", ExitCode.UNSAFE)
                    if name in members:
                        raise BundleError(f"member {name!r} appears twice", ExitCode.UNSAFE)
                    total = _check_size(name, info.size, total, len(members), limits)
                    fh = tar.extractfile(info)
                    data = fh.read(limits.member_bytes + 1) if fh else b""
                    if len(data) != info.size:
                        raise BundleError(
                            f"{path}: member {name!r} is cut short", ExitCode.TRUNCATED
                        )
                    members[name] = data
        except EOFError as exc:
            raise BundleError(
                f"{path}: the compressed stream ends early (truncated download?)",
                ExitCode.TRUNCATED,
            ) from exc
        except zstd.ZstdError as exc:
            raise BundleError(f"{path}: corrupt zstd data ({exc})", ExitCode.TRUNCATED) from exc
        except tarfile.ReadError as exc:
            # tarfile reports a stream that stops inside a header or block this way too.
            if members:
                raise BundleError(
                    f"{path}: the tar stream ends early ({exc})", ExitCode.TRUNCATED
                ) from exc
            raise BundleError(f"{path}: not a tar archive inside the zstd stream") from exc
    if not members:
        raise BundleError(f"{path}: the archive holds no files")
    return members


def _read_dir(root: Path, limits: Limits) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    total = 0
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
            total = _check_size(rel, st.st_size, total, len(members), limits)
            with open(full, "rb") as fh:
                members[rel] = fh.read(limits.member_bytes + 1)
    if not members:
        raise BundleError(f"{root}: the directory holds no files")
    return members


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
