"""Pseudonyms: one original, one placeholder, everywhere; two originals, never one."""

from __future__ import annotations

import ipaddress
import re

from collector.redact import Redactor
from collector.redact.pseudonyms import Pseudonyms

KEY = b"consistency-key-0123456789abcdef"


def test_one_address_in_ten_files_maps_to_one_placeholder() -> None:
    r = Redactor(key=KEY)
    templates = [
        "dial tcp {ip}:443",
        '{{"hostIP": "{ip}"}}',
        "hostIP: {ip}\n",
        "node={ip} ready",
        "http://{ip}:8080/healthz",
        "peer [{ip}]",
        "addr={ip},port=1",
        "{ip}",
        "from {ip}\n",
        "'{ip}'",
    ]
    outs = [
        r.redact_text(t.format(ip="10.0.3.17"), member=f"f{i}") for i, t in enumerate(templates)
    ]
    found = {m for out in outs for m in re.findall(r"10\.\d+\.\d+\.\d+", out)}
    assert len(found) == 1 and "10.0.3.17" not in found
    (pseudonym,) = found
    # The host-name form of the same address follows the same pseudonym.
    host = r.redact_text("ip-10-0-3-17.ec2.internal")
    assert host == "ip-" + pseudonym.replace(".", "-") + ".ec2.internal"
    assert r.mapping()["10.0.3.17"] == pseudonym
    assert r.mapping()["ip-10-0-3-17"] == "ip-" + pseudonym.replace(".", "-")
    assert set(r.summary()["files"]) == {f"f{i}" for i in range(10)}


def test_two_addresses_never_share_a_pseudonym() -> None:
    p = Pseudonyms(KEY)
    # Every address of a /20 inside 10/8 and of 192.168/16's first /20: a bijection each.
    for base, count in (
        (int(ipaddress.IPv4Address("10.1.0.0")), 4096),
        (int(ipaddress.IPv4Address("192.168.0.0")), 4096),
    ):
        outs = {p.ipv4(base + i) for i in range(count)}
        assert len(outs) == count
        first = base >> 24
        assert all(o >> 24 == first for o in outs)


def test_subnets_are_preserved() -> None:
    p = Pseudonyms(KEY)
    a, b = int(ipaddress.IPv4Address("10.244.1.5")), int(ipaddress.IPv4Address("10.244.1.200"))
    c = int(ipaddress.IPv4Address("10.245.1.5"))
    assert p.ipv4(a) >> 8 == p.ipv4(b) >> 8  # same /24 stays the same /24
    assert p.ipv4(a) >> 16 != p.ipv4(c) >> 16  # different /16 stays different


def test_secrets_consistent_and_distinct() -> None:
    r = Redactor(key=KEY)
    one = r.redact_text("password=alpha-secret-1")
    again = r.redact_text('{"token": "alpha-secret-1"}')
    other = r.redact_text("password=beta-secret-2")
    tag = one.split("=", 1)[1]
    assert tag in again
    assert other.split("=", 1)[1] != tag


def test_tags_never_collide() -> None:
    p = Pseudonyms(KEY)
    tags = {p.secret("password", f"value-{i}") for i in range(20000)}
    assert len(tags) == 20000


def test_the_key_decides_and_is_never_in_the_output() -> None:
    a = Redactor(key=KEY).redact_text("10.0.3.17 password=x1")
    b = Redactor(key=b"another-key-0123456789abcdef0123").redact_text("10.0.3.17 password=x1")
    assert a != b
    r = Redactor()
    out = r.redact_text("10.0.3.17 password=x1")
    assert r.pseudonyms._key.hex() not in out and r.pseudonyms._key.hex() not in str(r.summary())


def test_member_names_follow_the_same_pseudonyms() -> None:
    r = Redactor(key=KEY)
    name = r.member_name(
        "logs/tensor-fusion-sys/hypervisor-ip-10-0-3-17.ec2.internal/hypervisor.log"
    )
    pod = r.redact_text('"pod": "hypervisor-ip-10-0-3-17.ec2.internal"')
    node = r.redact_text("nodeName: ip-10-0-3-17.ec2.internal")
    host = node.split(": ")[1]
    assert "10-0-3-17" not in name
    assert f"hypervisor-{host}/" in name and f"hypervisor-{host}" in pod
    # A valid Kubernetes name (DNS subdomain) stays one.
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", host)
    assert r.member_name("logs/ns/pod-password=hunter2/c.log") == r.member_name(
        "logs/ns/pod-password=hunter2/c.log"
    )
    assert "hunter2" not in r.member_name("logs/ns/pod-password=hunter2/c.log")
    assert re.fullmatch(r"[A-Za-z0-9._/-]+", r.member_name("logs/ns/pod-password=hunter2/c.log"))
