"""Consistent, typed placeholders, keyed by a per-bundle secret.

Secrets become `<redacted:KIND:TAG>`: KIND says what was there (`jwt`, `password`, ...),
TAG is a keyed hash of the original, so one value reads the same everywhere in a bundle and
two values never share a tag (a collision lengthens the newer tag).

Addresses stay addresses. An internal IPv4 maps to an address of the same private range by a
keyed prefix-preserving permutation (the Crypto-PAn construction): bit i of the output is
bit i of the input flipped by a keyed function of the input's first i bits. So the map is a
bijection (two addresses never collide), it keeps the range prefix (10/8 stays in 10/8,
172.16/12 in 172.16/12, ...), and two addresses in one subnet stay in one subnet, which keeps
CIDRs meaningful (`10.244.0.0/16` and the pod IPs inside it map to one pseudonymous /16).
IPv6 ULA and link-local addresses get the same treatment over 128 bits.

The key is random per run and lives only in memory: it is never written into a bundle.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import threading

PLACEHOLDER_PREFIX = "<redacted:"
TAG_LENGTH = 6

_ULA = ipaddress.IPv6Network("fc00::/7")
_LINK_LOCAL = ipaddress.IPv6Network("fe80::/10")
_LINK_LOCAL_64 = ipaddress.IPv6Network("fe80::/64")


def private_v4_prefix(value: int) -> int | None:
    """How many leading bits of an internal IPv4 address (10/8, 172.16/12, 192.168/16, CGNAT
    100.64/10) to keep; None if not internal."""
    first = value >> 24
    if first == 10:
        return 8
    if first == 172 and 16 <= (value >> 16) & 0xFF <= 31:
        return 12
    if first == 192 and (value >> 16) & 0xFF == 168:
        return 16
    if first == 100 and 64 <= (value >> 16) & 0xFF <= 127:
        return 10
    return None


def _public_v4(value: int) -> bool:
    return ipaddress.IPv4Address(value).is_global and private_v4_prefix(value) is None


def _public_v6(value: int) -> bool:
    addr = ipaddress.IPv6Address(value)
    return addr.is_global and addr not in _ULA and addr not in _LINK_LOCAL


class Pseudonyms:
    """original -> placeholder, assigned on first sight; safe to share between threads."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        if len(self._key) < 16:
            raise ValueError("the redaction key must be at least 16 bytes")
        self._lock = threading.Lock()
        self._secrets: dict[str, str] = {}
        self._tags: dict[str, str] = {}  # tag -> original, to detect collisions
        self._addresses: dict[str, str] = {}  # every original address form -> its pseudonym
        self._flips: dict[tuple[int, int, int], int] = {}
        self._v4: dict[int, int] = {}
        self._v6: dict[int, int] = {}

    # ------------------------------------------------------------------ secrets
    def secret(self, kind: str, original: str) -> str:
        with self._lock:
            known = self._secrets.get(original)
            if known is not None:
                return known
            digest = self._hash(b"secret", original.encode("utf-8", "surrogatepass")).hex()
            length = TAG_LENGTH
            while self._tags.get(digest[:length], original) != original:
                length += 2
            tag = digest[:length]
            self._tags[tag] = original
            placeholder = f"{PLACEHOLDER_PREFIX}{kind}:{tag}>"
            self._secrets[original] = placeholder
            return placeholder

    # ------------------------------------------------------------------ addresses
    def ipv4(self, value: int, *, public: bool = False) -> int:
        """The pseudonym of an IPv4 address given as an int (internal, or public if asked)."""
        with self._lock:
            known = self._v4.get(value)
            if known is not None:
                return known
            fixed = private_v4_prefix(value)
            if fixed is not None:
                out = self._permute(value, 32, fixed)
            elif public:
                # Cycle-walking keeps the map a bijection on public addresses: a pseudonym
                # never lands in a private or reserved range, where it would mislead.
                out = self._permute(value, 32, 0)
                while not _public_v4(out):
                    out = self._permute(out, 32, 0)
            else:
                out = value
            self._v4[value] = out
            return out

    def ipv6(self, value: int, *, public: bool = False) -> int:
        with self._lock:
            known = self._v6.get(value)
            if known is not None:
                return known
            addr = ipaddress.IPv6Address(value)
            if addr in _LINK_LOCAL_64:
                out = self._permute(value, 128, 64)  # only the interface id varies
            elif addr in _LINK_LOCAL:
                out = self._permute(value, 128, 10)
                while ipaddress.IPv6Address(out) in _LINK_LOCAL_64:
                    out = self._permute(out, 128, 10)
            elif addr in _ULA:
                out = self._permute(value, 128, 8)  # fd stays fd
            elif public and _public_v6(value):
                out = self._permute(value, 128, 3)
                while not _public_v6(out):
                    out = self._permute(out, 128, 3)
            else:
                out = value
            self._v6[value] = out
            return out

    def note_address(self, original: str, pseudonym: str) -> None:
        """Remember one textual form (address, CIDR, host name) for the redaction map."""
        if original != pseudonym:
            with self._lock:
                self._addresses.setdefault(original, pseudonym)

    def _permute(self, value: int, width: int, fixed: int) -> int:
        out = value
        for i in range(fixed, width):
            prefix = value >> (width - i)
            cache_key = (width, i, prefix)
            flip = self._flips.get(cache_key)
            if flip is None:
                msg = f"{width}:{i}:{prefix:x}".encode()
                flip = self._flips[cache_key] = self._hash(b"bit", msg)[0] & 1
            if flip:
                out ^= 1 << (width - 1 - i)
        return out

    # ------------------------------------------------------------------ other processes
    @property
    def key(self) -> bytes:
        """For worker processes of the same run (parallel.py) only: never write it anywhere."""
        return self._key

    def export(self) -> tuple[dict[str, str], dict[str, str]]:
        with self._lock:
            return dict(self._secrets), dict(self._addresses)

    def forget(self) -> None:
        """Drop what was seen (a worker between two jobs); the key and caches stay."""
        with self._lock:
            self._secrets.clear()
            self._tags.clear()
            self._addresses.clear()

    def merge(self, seen: list[tuple[dict[str, str], dict[str, str]]]) -> bool:
        """Adopt what workers assigned; False (and nothing adopted) if two of them collide."""
        with self._lock:
            secrets, tags = dict(self._secrets), dict(self._tags)
            for worker_secrets, _ in seen:
                for original, placeholder in worker_secrets.items():
                    tag = placeholder.rsplit(":", 1)[1].rstrip(">")
                    if secrets.get(original, placeholder) != placeholder:
                        return False
                    if tags.get(tag, original) != original:
                        return False
                    secrets[original], tags[tag] = placeholder, original
            self._secrets, self._tags = secrets, tags
            for _, addresses in seen:
                for original, pseudonym in addresses.items():
                    self._addresses.setdefault(original, pseudonym)
            return True

    # ------------------------------------------------------------------ output
    def mapping(self) -> dict[str, str]:
        """Every original seen and its placeholder: for the customer's eyes only."""
        with self._lock:
            return dict(sorted({**self._addresses, **self._secrets}.items()))

    def _hash(self, domain: bytes, data: bytes) -> bytes:
        return hashlib.blake2b(domain + b"\0" + data, key=self._key[:64], digest_size=16).digest()
