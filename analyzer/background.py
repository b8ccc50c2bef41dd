"""A second process that reads the bundle beside this one, where one can run (Linux, a second
CPU). It looks through every member for secrets (see leaks.py) and parses a share of the
object listings, which it sends back marshalled: loading a listing so costs a quarter of
parsing it here (orjson, then the walk that shares its repeated strings).

Which listings it takes is worked out the same way in both processes, from the manifest and
the members' sizes in the archive's order, so nothing has to be agreed on the way. Whatever
it does not deliver (it died, or a listing would not marshal) this process reads itself."""

from __future__ import annotations

import marshal
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .leaks import Leak, Scanner

Members = Callable[[], Iterable[tuple[str, bytes]]]
# The manifest's bytes -> the members that are object listings (None: not a manifest).
Plan = Callable[[bytes], "set[str] | None"]
# A listing's bytes, its name and a string memo -> its value (a BundleError is a value too).
Parse = Callable[[bytes, str, dict[str, str]], Any]


class Share:
    """Decides, member by member, whether the helper parses a listing: when that ends the
    work of both processes sooner, counting what each already has to do. The costs are per
    byte, relative to parsing a byte here."""

    # Measured on a 10,000-pod bundle: parsed there, a byte costs nearly twice what it costs
    # here (the walk and marshal, and two processes sharing the memory bus); loading it here
    # costs a quarter; the look for secrets, a fifth of every member's parse.
    SMALL = 256 * 1024  # a smaller listing parses here: the round trip is not worth it
    THERE = 1.8
    LOAD = 0.25
    SCAN = 0.2

    def __init__(self, listings: set[str], head_start: int = 0) -> None:
        self.listings = listings
        self.here = float(head_start)  # what this process does before it starts reading
        self.there = 0.0

    def helper_takes(self, name: str, size: int) -> bool:
        self.there += self.SCAN * size
        if name not in self.listings:
            return False
        if size >= self.SMALL and self.there + self.THERE * size <= self.here + size:
            self.there += self.THERE * size
            self.here += self.LOAD * size
            return True
        self.here += size
        return False


class Background:
    """The helper process and what it sends: listings as it parses them, then its leaks.
    `received` holds the listings that arrived, `raw` the bytes of those it sent back
    unparsed, `leaks` what the scan found (None while unknown, or if it could not tell)."""

    # Forking costs a few milliseconds: not worth it for a bundle that parses in less.
    MIN_SIZE = 128 * 1024

    def __init__(self, members: Members, plan: Plan, parse: Parse, head_start: int = 0) -> None:
        context = multiprocessing.get_context("fork")
        self._answers, sending = context.Pipe(duplex=False)
        self._child = context.Process(
            target=_work, args=(members, plan, parse, head_start, sending), daemon=True
        )
        self.head_start = head_start
        self._child.start()
        sending.close()
        self.share: Share | None = None
        self.received: dict[str, Any] = {}
        self.raw: dict[str, bytes] = {}
        self.leaks: list[Leak] | None = None
        self._done = False

    @classmethod
    def start(
        cls, path: Path, members: Members, plan: Plan, parse: Parse, head_start: int = 0
    ) -> Background | None:
        """A helper running beside this process, where that is safe and pays: Linux (fork), a
        second CPU, no other thread (a forked child must not wait on a lock one held) and an
        archive large enough."""
        try:
            if (
                sys.platform != "linux"
                or len(os.sched_getaffinity(0)) < 2
                or threading.active_count() > 1
                or not path.is_file()
                or path.stat().st_size < cls.MIN_SIZE
            ):
                return None
            return cls(members, plan, parse, head_start)
        except OSError:  # no process could be started: all is done here
            return None

    def begin(self, listings: set[str]) -> None:
        """The manifest is read: from its next member on, listings may be the helper's."""
        self.share = Share(listings, self.head_start)

    def takes(self, name: str, size: int) -> bool:
        return self.share is not None and self.share.helper_takes(name, size)

    def collect(self, wait: bool = False) -> None:
        """Take in what has arrived; with `wait`, everything, until the helper is done."""
        while not self._done:
            try:
                if not wait and not self._answers.poll():
                    return
                name, kind = pickle.loads(self._answers.recv_bytes())
                body = self._answers.recv_bytes()
                if kind == "listing":
                    self.received[name] = marshal.loads(body)
                elif kind == "raw":
                    self.raw[name] = body
                else:
                    self.leaks, self._done = pickle.loads(body), True
            except (EOFError, OSError, ValueError, pickle.UnpicklingError):  # it died
                self._done = True
        if wait:
            self.cancel()

    def cancel(self) -> None:
        if self._child.is_alive():
            self._child.kill()
        self._child.join()
        self._answers.close()


def _work(members: Members, plan: Plan, parse: Parse, head_start: int, answers: Any) -> None:
    # Ctrl-C is the parent's to answer (it stops this process); nothing here may print.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    found: list[Leak] | None = None
    try:
        scanner, share, memo = Scanner(), None, {}
        for name, data in members():
            if name == "manifest.json":
                listings = plan(data)
                share = Share(listings, head_start) if listings is not None else None
                continue
            scanner.add(name, data)
            if share is not None and share.helper_takes(name, len(data)):
                _send_listing(answers, name, data, parse(data, name, memo))
        found = scanner.finish()
    except Exception:  # a bundle this process cannot read: the parent says why
        found = None
    try:
        _send(answers, None, "leaks", pickle.dumps(found))
        answers.close()
    except OSError:  # the parent is gone
        pass


def _send_listing(answers: Any, name: str, data: bytes, value: Any) -> None:
    # marshal, not pickle: it writes a listing a third faster, and keeps a string shared by
    # many objects one string. A listing that did not parse goes back as bytes: the parent's
    # own read says why, in its words; so does one nested too deeply for marshal.
    try:
        if isinstance(value, Exception):
            raise ValueError
        _send(answers, name, "listing", marshal.dumps(value))
    except (ValueError, RecursionError):
        _send(answers, name, "raw", data)


def _send(answers: Any, name: str | None, kind: str, body: bytes) -> None:
    answers.send_bytes(pickle.dumps((name, kind)))
    answers.send_bytes(body)
