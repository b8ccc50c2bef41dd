"""Where tf-collect and tf-analyze may write: one policy for every output path.

Nothing that already exists at an output path is destroyed by surprise:

- only a regular file is ever replaced, never a device (`/dev/null`, `/dev/full`), a directory,
  a FIFO, a socket or a symbolic link;
- a regular file is replaced only when the caller allows it (`replace=True`: tf-analyze's
  report, tf-collect's `--force`); otherwise an existing path is refused, checked again at the
  moment the file appears (a hard link that fails if the name was taken meanwhile);
- a missing directory is never created;
- the file appears whole or not at all: it is written beside its path and moved into place;
  so does a directory of files (`write_tree`), with nothing written outside it.

Imports nothing of the project's packages: both CLIs use it.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO


class OutputRefused(Exception):
    """An output path that cannot or must not be written; the message says why in one line."""


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def check(path: Path, *, replace: bool, what: str = "output", force_hint: str = "") -> None:
    """Refuse, before any work, a path that may not be written. `force_hint` tells how to
    allow replacing an existing regular file ("use --force to replace it")."""
    parent = path.parent
    if not parent.is_dir():
        raise OutputRefused(f"the directory of the {what} {path} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputRefused(f"the directory of the {what} {path} is not writable")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    for test, kind in _KINDS:
        if test(mode):
            raise OutputRefused(f"the {what} {path} exists and is {kind}; choose another path")
    if not replace:
        hint = f"; {force_hint}" if force_hint else ""
        raise OutputRefused(f"the {what} {path} already exists{hint}")


def unique(directory: Path, stem: str, suffix: str) -> Path:
    """`directory/stem+suffix`, or with -2, -3 ... added when that name is taken."""
    path, n = directory / f"{stem}{suffix}", 1
    while os.path.lexists(path):
        n += 1
        path = directory / f"{stem}-{n}{suffix}"
    return path


def temporary(path: Path, mode: int = 0o644) -> tuple[IO[bytes], Path]:
    """An open temporary file beside `path`, to be moved there by `publish`."""
    parent = path.parent
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    os.fchmod(fd, mode)
    return os.fdopen(fd, "wb"), Path(name)


def staging(path: Path) -> Path:
    """A new private directory beside `path`, where its content is made before it appears."""
    return Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))


def publish(tmp: Path, path: Path, *, replace: bool) -> None:
    """Move the finished `tmp` to `path` under the policy of `check`, at the last moment."""
    if not replace:
        try:
            os.link(tmp, path)  # fails if the name was taken since `check`
        except FileExistsError:
            raise OutputRefused(
                f"{path} appeared while it was being written; not replaced"
            ) from None
        tmp.unlink()
        return
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = stat.S_IFREG
    if not stat.S_ISREG(mode):
        raise OutputRefused(f"{path} is no longer a regular file; not replaced")
    os.replace(tmp, path)


def write(
    path: Path,
    fill: Callable[[IO[bytes]], None],
    *,
    replace: bool,
    what: str = "output",
    force_hint: str = "",
    mode: int = 0o644,
) -> Path:
    """Check `path`, let `fill` write the content to a temporary file, and publish it."""
    check(path, replace=replace, what=what, force_hint=force_hint)
    try:
        fh, tmp = temporary(path, mode)
    except OSError as exc:
        raise OutputRefused(f"cannot write the {what} {path}: {exc.strerror or exc}") from exc
    try:
        with fh:
            fill(fh)
        publish(tmp, path, replace=replace)
    except OSError as exc:
        raise OutputRefused(f"cannot write the {what} {path}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_tree(path: Path, files: Mapping[str, bytes], *, what: str = "output") -> Path:
    """Make the directory `path` holding `files` (relative POSIX names), never replacing
    anything: it is filled beside `path` and renamed into place, which fails if `path` was
    taken meanwhile by anything but an empty directory."""
    check(path, replace=False, what=what)
    try:
        stage = staging(path)
    except OSError as exc:
        raise OutputRefused(f"cannot write the {what} {path}: {exc.strerror or exc}") from exc
    try:
        root = stage.resolve()
        for name, data in files.items():
            target = (stage / name).resolve()
            if root not in target.parents:
                raise OutputRefused(f"{name} would be written outside the {what} {path}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if os.path.lexists(path):
            raise OutputRefused(f"{path} appeared while it was being written; not replaced")
        os.rename(stage, path)
    except OSError as exc:
        raise OutputRefused(f"cannot write the {what} {path}: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return path
