"""Shared fixtures: the tf-basic scenario served by an emulator, and a real kubectl runner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from emulatorkit import TF_BASIC, Kubectl, make_kubectl
from faultkit import FaultyEmulator
from scenarioloader import load_scenario

from emulator.cluster import ClusterData
from emulator.server import Emulator


@pytest.fixture(scope="session")
def tf_data() -> ClusterData:
    return load_scenario(TF_BASIC)


@pytest.fixture(scope="module")
def emulator(tf_data: ClusterData) -> Iterator[FaultyEmulator]:
    with FaultyEmulator(tf_data) as emu:
        yield emu


@pytest.fixture(autouse=True)
def _clean_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    # A fault left behind by one test must not leak into the next one on the shared server.
    yield
    if "emulator" in request.fixturenames:
        request.getfixturevalue("emulator").faults.clear()


@pytest.fixture(scope="module")
def kubeconfig(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return emulator.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.fixture(scope="module")
def kubectl(kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return make_kubectl(kubeconfig, tmp_path_factory.mktemp("home"))
