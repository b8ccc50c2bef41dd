"""The atheris target fuzz/reader_atheris.py imports and runs without atheris, so it does not
rot: its TestOneInput takes a few inputs of each of its three kinds."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
from bundlekit import base_manifest

ROOT = Path(__file__).resolve().parents[2]


def _target(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "atheris", None)  # as where atheris is not installed
    spec = importlib.util.spec_from_file_location(
        "reader_atheris", ROOT / "fuzz" / "reader_atheris.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_atheris_target_runs_on_each_kind_of_input(monkeypatch: pytest.MonkeyPatch) -> None:
    target = _target(monkeypatch)
    assert target.atheris is None
    sample = (ROOT / "sample_bundles" / "healthy.tar.zst").read_bytes()
    manifest = json.dumps(base_manifest([])).encode()
    for data in [b"", b"\0", b"\0" + sample, b"\0" + sample[:100], b"\1garbage", b"\2" + manifest,
                 b"\2{", b"\5" + b"\xff" * 40]:  # fmt: skip
        target.TestOneInput(data)
    assert target.bundle_bytes(b"\0" + sample) == sample
    shutil.rmtree(target._WORKDIR)
