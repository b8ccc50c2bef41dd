"""The helper process that reads a bundle beside the analysis: what it parses and finds is
what this process would have, and whatever it fails to deliver is read here."""

from __future__ import annotations

import json
import marshal
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from bundlekit import base_manifest, file_member, manifest_member, raw_tar_zst

from analyzer import background
from analyzer.archive import Archive
from analyzer.background import Background, Share
from analyzer.bundle import Bundle
from analyzer.errors import BundleError

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4eHh4eHh4eCJ9.c2lnbmF0dXJlc2ln"
TOKEN = "ghp_" + "A1b2C3d4E5" * 4


def _pods(ns: str, count: int) -> dict[str, Any]:
    """A pod listing with what the parse must keep exact: repeated and unique strings, a
    float, an integer beyond 64 bits (the standard library reads that listing), nesting."""
    items = []
    for i in range(count):
        uid = os.urandom(32).hex()
        items.append(
            {
                "metadata": {
                    "name": f"train-{i}",
                    "namespace": ns,
                    "uid": uid,
                    "labels": {"app": "train", "tensor-fusion.ai/enabled": "true"},
                },
                "spec": {
                    "nodeName": f"gpu-{i % 3}",
                    "containers": [{"name": "app", "image": "pytorch:2.4", "args": ["--lr", 0.5]}],
                },
                "status": {"phase": "Running", "podIP": f"10.1.{i // 256}.{i % 256}"},
            }
        )
    if ns == "big-int":
        items[0]["status"]["epoch"] = 2**70
    return {"apiVersion": "v1", "kind": "PodList", "items": items}


def _art(ns: str) -> dict[str, Any]:
    return {
        "id": f"pods-{ns}", "step": "t", "type": "objects", "status": "ok", "group": "",
        "version": "v1", "resource": "pods", "kind": "Pod", "namespaced": True,
        "namespace": ns, "paths": [f"objects/pods/{ns}.json"],
    }  # fmt: skip


SPACES = ["a", "b", "big-int", "c", "d"]


def _bundle(tmp_path: Path, listings: dict[str, bytes] | None = None) -> Path:
    """Large enough for the helper to run (random uids do not compress), with a JWT in one
    listing and a GitHub token in a log."""
    data = {ns: json.dumps(_pods(ns, 1000)).encode() for ns in SPACES}
    data["a"] = data["a"].replace(b'"train-0"', f'"train-{JWT}"'.encode())
    data.update(listings or {})
    members = [manifest_member(base_manifest([_art(ns) for ns in SPACES]))]
    members += [file_member(f"objects/pods/{ns}.json", data[ns]) for ns in SPACES]
    members.append(file_member("notes.txt", b"token " + TOKEN.encode()))
    path = raw_tar_zst(tmp_path / "large.tar.zst", members)
    assert path.stat().st_size >= Background.MIN_SIZE
    return path


def _helper_takes(*names: str) -> Any:
    def takes(self: Share, name: str, size: int) -> bool:
        return any(name.endswith(f"/{n}.json") for n in names)

    return takes


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[Background]:
    """The helpers started, as they were when the reading finished."""
    started: list[Background] = []
    start = Background.start.__func__  # type: ignore[attr-defined]

    def watch(cls: type, *args: Any) -> Any:
        helper = start(cls, *args)
        if helper is not None:
            started.append(helper)
        return helper

    monkeypatch.setattr(Background, "start", classmethod(watch))
    return started


def _alone(path: Path, monkeypatch: pytest.MonkeyPatch) -> Bundle:
    with monkeypatch.context() as m:
        m.setattr(Background, "start", classmethod(lambda cls, *a: None))
        return Bundle.open(path)


def _content(bundle: Bundle) -> tuple[Any, ...]:
    pods = bundle.objects("pods")
    return (
        bundle.manifest,
        [repr(p) for p in pods],  # repr tells 1 from 1.0 and keeps the order
        [(x.member, x.kind, x.count) for x in bundle.possible_secrets()],
    )


def test_listings_parsed_beside_read_as_those_parsed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: list[Background]
) -> None:
    path = _bundle(tmp_path)
    monkeypatch.setattr(Share, "helper_takes", _helper_takes("a", "big-int", "d"))
    beside = Bundle.open(path)
    (helper,) = watched
    assert helper.received == {}  # all handed over to the bundle
    assert helper.leaks is not None  # its scan answered
    expected = _content(_alone(path, monkeypatch))
    assert _content(beside) == expected
    assert expected[2] == [("notes.txt", "github-token", 1), ("objects/pods/a.json", "jwt", 1)]
    assert beside.objects("pods", namespace="big-int")[0]["status"]["epoch"] == 2**70


def test_what_the_helper_sends_is_what_it_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _bundle(tmp_path)
    monkeypatch.setattr(Share, "helper_takes", _helper_takes("b", "c"))
    sent: list[str] = []
    original = Background.collect

    def collect(self: Background, wait: bool = False) -> None:
        original(self, wait)
        if wait:
            sent.extend(sorted(self.received))

    monkeypatch.setattr(Background, "collect", collect)
    Bundle.open(path)
    assert sent == ["objects/pods/b.json", "objects/pods/c.json"]


def test_a_bad_listing_the_helper_took_is_refused_as_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: list[Background]
) -> None:
    path = _bundle(tmp_path, {"c": b'{"kind": "PodList", "items": [' + b"x" * 300_000})
    monkeypatch.setattr(Share, "helper_takes", _helper_takes("c"))
    with monkeypatch.context() as m:  # the helper sent the bytes back: no second read
        m.setattr(Archive, "again", lambda self: pytest.fail("the archive was read again"))
        with pytest.raises(BundleError) as beside:
            Bundle.open(path)
    assert watched
    with pytest.raises(BundleError) as here:
        _alone(path, monkeypatch)
    assert str(beside.value) == str(here.value)
    assert "objects/pods/c.json is not valid JSON" in str(here.value)
    assert beside.value.exit_code == here.value.exit_code


def test_a_helper_that_dies_at_once_leaves_everything_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: list[Background]
) -> None:
    path = _bundle(tmp_path)
    expected = _content(_alone(path, monkeypatch))
    monkeypatch.setattr(Share, "helper_takes", _helper_takes("a", "b", "c", "d"))
    monkeypatch.setattr(background, "_work", lambda *args: os._exit(3))
    beside = Bundle.open(path)
    assert watched and watched[0].leaks is None
    assert _content(beside) == expected


def test_a_helper_that_dies_midway_leaves_the_rest_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: list[Background]
) -> None:
    path = _bundle(tmp_path)
    expected = _content(_alone(path, monkeypatch))
    monkeypatch.setattr(Share, "helper_takes", _helper_takes("a", "b", "d"))
    send = background._send_listing

    def send_one_then_die(answers: Any, name: str, data: bytes, value: Any) -> None:
        if not name.endswith("/a.json"):
            os._exit(3)
        send(answers, name, data, value)

    monkeypatch.setattr(background, "_send_listing", send_one_then_die)
    beside = Bundle.open(path)
    assert _content(beside) == expected


class _Answers:
    """A pipe's sending end: each message is a header (name, kind), then its body."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []
        self._header: tuple[str, str] | None = None

    def send_bytes(self, data: bytes) -> None:
        if self._header is None:
            self._header = pickle.loads(data)
            return
        name, kind = self._header
        self.sent.append((name, kind, marshal.loads(data) if kind == "listing" else data))
        self._header = None


def test_a_listing_too_deep_to_marshal_goes_back_as_bytes() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    answers = _Answers()
    background._send_listing(answers, "objects/x.json", b"[[...]]", deep)
    background._send_listing(answers, "objects/y.json", b"{}", {})
    background._send_listing(answers, "objects/z.json", b"{", BundleError("bad"))
    assert answers.sent == [
        ("objects/x.json", "raw", b"[[...]]"),
        ("objects/y.json", "listing", {}),
        ("objects/z.json", "raw", b"{"),
    ]


def test_the_share_gives_the_helper_what_ends_both_sooner() -> None:
    mib = 1024 * 1024
    share = Share({"l1", "l2", "l3", "l4", "tiny"})
    assert [
        share.helper_takes(name, size)
        for name, size in [("l1", 4 * mib), ("log", mib), ("l2", 4 * mib), ("l3", 4 * mib)]
    ] == [False, False, False, True]  # the helper starts behind: it scans every member
    assert not share.helper_takes("tiny", Share.SMALL - 1)
    ahead = Share({"l1"}, head_start=16 * mib)  # this process was busy before it read
    assert ahead.helper_takes("l1", 4 * mib)
