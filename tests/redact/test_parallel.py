"""Several processes give exactly what one gives: same output, same counts, same map."""

from __future__ import annotations

import pytest

import collector.redact.parallel as parallel
from collector.redact import Redactor
from collector.redact.pseudonyms import Pseudonyms

KEY = b"parallel-test-key-0123456789abcd"


def _items() -> list[tuple[str, str]]:
    return [
        (
            f"logs/ns/pod-{i}/c.log",
            f"node ip-10-0-{i}-7.ec2.internal 10.0.{i}.7 password=pw-{i % 5} ghp_{'A1b2' * 9}\n"
            * 50,
        )
        for i in range(12)
    ]


def test_processes_match_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    serial, multi = Redactor(key=KEY), Redactor(key=KEY)
    one = parallel.redact_members(serial, _items(), parallel.redact_text_member, workers=1)
    two = parallel.redact_members(multi, _items(), parallel.redact_text_member, workers=2)
    assert one == two
    assert serial.summary() == multi.summary()
    assert serial.mapping() == multi.mapping()


def test_a_tag_collision_between_workers_is_refused() -> None:
    p = Pseudonyms(KEY)
    a = ({"value-a": "<redacted:password:abc123>"}, {})
    b = ({"value-b": "<redacted:password:abc123>"}, {})
    assert p.merge([a]) is True
    assert p.merge([b]) is False
    assert p.mapping() == {"value-a": "<redacted:password:abc123>"}
