"""A coverage-guided fuzzer for the bundle reader (analyzer/bundle/).

The property is the one tests/fuzz/test_reader_fuzz.py checks on Hypothesis's input:
`Bundle.open` opens the input or refuses it with a BundleError carrying one of the reader's
exit codes and a one-line message; any other exception is a crash, and so is a file written.

    pip install atheris            # not a dependency of tf-support: CI does not need it
    python fuzz/reader_atheris.py -max_total_time=600 [corpus_dir] [other libFuzzer flags]

The first input byte picks what the rest is: the bundle file itself (0), a tar stream the
fuzzer compresses with zstd (1), or the manifest of a bundle whose other members are those of
a small real one (2). Without atheris the module still imports, and `TestOneInput` can be
called on inputs by hand or by the tests (tests/fuzz/test_atheris_target.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    import atheris  # type: ignore[import-not-found]
except ImportError:  # the tests import the target without it
    atheris = None

with atheris.instrument_imports() if atheris else contextlib.nullcontext():
    from analyzer.bundle import Bundle
    from analyzer.bundle.archive import Limits
    from analyzer.errors import BundleError, ExitCode
    from tf_support_schemas.archive import zstd  # the reader under test lives there too

READER_CODES = frozenset(range(ExitCode.NOT_A_BUNDLE, ExitCode.TOO_LARGE + 1))
LIMITS = Limits(member_bytes=1 << 20, total_bytes=4 << 20, members=1000)
LOG = "logs/tensor-fusion-sys/tf-operator-0/controller.log"
_WORKDIR = Path(tempfile.mkdtemp(prefix="tf-reader-fuzz-"))
_CWD = _WORKDIR / "cwd"
_CWD.mkdir()


def _tar(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def bundle_bytes(data: bytes) -> bytes:
    """The bundle file an input stands for (see the module's docstring)."""
    mode, rest = (data[0] % 3, data[1:]) if data else (0, b"")
    if mode == 1:
        return zstd.compress(rest)
    if mode == 2:
        return zstd.compress(_tar([("manifest.json", rest), (LOG, b"E0101 boom\n")]))
    return rest


def TestOneInput(data: bytes) -> None:  # the name atheris calls
    path = _WORKDIR / "bundle.tar.zst"
    path.write_bytes(bundle_bytes(data))
    before = os.getcwd()
    os.chdir(_CWD)
    try:
        bundle = Bundle.open(path, LIMITS)
        bundle.possible_secrets()
    except BundleError as exc:
        message = str(exc)
        if exc.exit_code not in READER_CODES or not message or "\n" in message:
            raise AssertionError(f"a refusal without its code or one line: {exc!r}") from exc
    finally:
        os.chdir(before)
    written = sorted(p.name for p in _WORKDIR.rglob("*"))
    if written != ["bundle.tar.zst", "cwd"]:
        raise AssertionError(f"the reader wrote files: {written}")


def main() -> None:
    if atheris is None:
        sys.exit("reader_atheris.py needs atheris: pip install atheris")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
