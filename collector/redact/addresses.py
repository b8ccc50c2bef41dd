"""Internal addresses in any text: IPv4 (with ports and CIDRs), IPv6 ULA and link-local,
and IPv4 addresses embedded in host names (`ip-10-0-3-17.ec2.internal`).

Address or version? A dotted quad is an address unless its context makes it a version:

- glued to a longer dotted number (`1.10.0.3.17`, `10.0.3.17.5`), or to a letter, digit
  or `_` on its left (`v10.0.1.6`, `cudnn10.0.1.6`) or on its right (`10.0.1.6a`);
- right after a version word (`version: 10.0.1.6`, `TENSORRT_VERSION=10.0.1.6`) or a
  requirement operator (`==10.0.1.6`, `>=10.0.1.6`);
- followed by a package suffix (`10.0.1.6+cuda12.4`, `10.0.1.6~rc1`, `10.0.1.6-1+cuda12.4`).

Everything else is an address, including after `.` preceded by a letter
(`cn-hangzhou.192.168.0.100`, Alibaba node names), after `+` (`native+10.42.0.57+8000`,
TensorFusion connection URLs), and after a JSON escape (`\\n10.0.0.5`). A dashed quad is an
address after `ip-` (`ip-10-0-3-17`) or before a domain (`10-244-1-12.default.pod...`).
Public addresses stay unless `--redact-public-ips`; loopback, link-local IPv4 (169.254/16,
the metadata service) and unspecified addresses always stay: they name no host.

This pass runs after the secret finders, over their output, as one `re.sub` per address
family: addresses are by far the most frequent finding, and a substitution callback with a
per-text cache is the cheapest way to replace them.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter

from .pseudonyms import Pseudonyms, private_v4_prefix
from .scan import lower_keeping_offsets

# One pattern finds both forms (10.0.3.17 and 10-0-3-17; the separator repeats) with an
# optional CIDR length. No look-behind: `re` then searches for the first digit fast, and
# the left side is checked in the callback.
_V4_INTERNAL = re.compile(
    r"(?:10|172|192|100)([.-])[0-9]{1,3}\1[0-9]{1,3}\1[0-9]{1,3}(?![0-9])"
    r"(?:/([0-9]{1,2})(?![0-9A-Za-z]))?"
)
# Public mode: `ec2-54-231-0-12` must start at "ec2-", not at the "2" before the address.
_V4_ANY = re.compile(
    r"(?:ec2-)?[0-9]{1,3}([.-])[0-9]{1,3}\1[0-9]{1,3}\1[0-9]{1,3}(?![0-9])(?:/([0-9]{1,2})(?![0-9A-Za-z]))?"
)
_VERSION_BEFORE = re.compile(
    r"(?i)(?:version|release)[\"']?\s*[:=]?\s*[\"']?$|(?:==|>=|<=|~=|!=)\s*$"
)
_VERSION_AFTER = re.compile(r"\+[A-Za-z]|~|-[0-9]+[+~]")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_GLUED = _LETTERS | frozenset("0123456789_")
_DASHED_LEFT = _GLUED | {"-"}
_JSON_ESCAPES = frozenset("nrt")
_DIGITS = frozenset("0123456789")

_V6_INTERNAL = re.compile(
    r"f(?:[cd][0-9a-f]{2}|e[89ab][0-9a-f]):[0-9a-f:]*[0-9a-f:](?:%[0-9a-z_.-]+)?"
    r"(?:/[0-9]{1,3}(?![0-9]))?"
)
_V6_ANY = re.compile(
    r"[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?![0-9a-z:.])(?:%[0-9a-z_.-]+)?(?:/[0-9]{1,3}(?![0-9]))?"
)
_V6_LEFT = frozenset("0123456789abcdefghijklmnopqrstuvwxyz:.")


def _octets(s: str) -> int | None:
    value = 0
    for part in s.split("."):
        if len(part) > 1 and part[0] == "0":
            return None  # 10.01.2.3 is not how anyone writes an address
        n = int(part)
        if n > 255:
            return None
        value = value << 8 | n
    return value


def _escaped_at(text: str, start: int) -> bool:
    """An escaped newline or tab (`\\n` in a JSON string) ends right before `start`."""
    return start >= 2 and text[start - 1] in _JSON_ESCAPES and text[start - 2] == "\\"


def versionish(text: str, start: int, end: int) -> bool:
    """Whether the dotted quad text[start:end] is a version by its context (see above)."""
    if start:
        before = text[start - 1]
        if before == "." and start >= 2 and text[start - 2].isdigit():
            return True
        # `\n10.0.0.5` inside a JSON string is an escape, not a glued word.
        escaped = before in _JSON_ESCAPES and start >= 2 and text[start - 2] == "\\"
        if before in _GLUED and not escaped:
            return True
        window = text[max(0, start - 24) : start]
        if ("=" in window or "rsion" in window or "lease" in window or "RSION" in window) and (
            _VERSION_BEFORE.search(window)
        ):
            return True
    if end < len(text):
        after = text[end]
        if after == "." and text[end + 1 : end + 2].isdigit():
            return True
        if after in _LETTERS or after == "_":
            return True
        if after in "+~-" and _VERSION_AFTER.match(text, end, end + 12):
            return True
    return False


class AddressPass:
    """Replaces internal (or, if asked, all public) addresses in a text, counting them."""

    def __init__(self, pseudonyms: Pseudonyms, *, public_ips: bool = False) -> None:
        self.pseudonyms = pseudonyms
        self.public_ips = public_ips
        self._v4 = _V4_ANY if public_ips else _V4_INTERNAL
        self._v6 = _V6_ANY if public_ips else _V6_INTERNAL
        # The pseudonym is fixed per original text, so it is computed once per distinct text.
        self._cache: dict[str, str | None] = {}

    def run(self, text: str, counts: Counter[str]) -> str:
        if any(h in text for h in (("10", "172", "192") if not self.public_ips else (".", "-"))):
            text = self._run_v4(text, counts)
        if ":" in text:
            text = self._run_v6(text, counts)
        return text

    # ------------------------------------------------------------------ IPv4
    def _run_v4(self, text: str, counts: Counter[str]) -> str:
        cache = self._cache
        found = [0, 0]  # ipv4, hostname

        # The hottest code of the engine (one call per address in every text): kept flat.
        def replace(m: re.Match[str]) -> str:
            original = m.group()
            start = m.start()
            if start and text[start - 1] in _DIGITS:
                return original
            if original[0] == "e" or m.group(1) == "-":
                out = self._dashed(m, start + 4 if original[0] == "e" else start)
                if out != original:
                    found[1] += 1
                return out
            suffix = ""
            if "/" in original:
                quad, _, bits = original.partition("/")
                if int(bits) > 32:  # not a CIDR ("10.0.0.1/64"): the address alone
                    original, suffix = quad, "/" + bits
            if versionish(text, start, m.end()):
                return m.group()
            replacement = cache.get(original, "")
            if replacement == "":
                replacement = cache[original] = self._v4_pseudonym(original)
            if replacement is None:
                return m.group()
            found[0] += 1
            return replacement + suffix

        text = self._v4.sub(replace, text)
        if found[0]:
            counts["ipv4"] += found[0]
        if found[1]:
            counts["hostname"] += found[1]
        return text

    def _v4_pseudonym(self, original: str) -> str | None:
        quad, _, cidr_text = original.partition("/")
        value = _octets(quad)
        if value is None or not self._redactable(value):
            return None
        out = self.pseudonyms.ipv4(value, public=self.public_ips)
        if out == value:
            return None
        if cidr_text:
            cidr = int(cidr_text)
            out &= (0xFFFFFFFF << (32 - cidr)) & 0xFFFFFFFF
        replacement = str(ipaddress.IPv4Address(out)) + (f"/{cidr_text}" if cidr_text else "")
        self.pseudonyms.note_address(original, replacement)
        return replacement

    def _redactable(self, value: int) -> bool:
        if private_v4_prefix(value) is not None:
            return True
        return self.public_ips and ipaddress.IPv4Address(value).is_global

    def _dashed(self, m: re.Match[str], start: int) -> str:
        """`ip-10-0-3-17` (AWS node names) or `10-244-1-12.<domain>` (DNS forms)."""
        text, end = m.string, m.end()
        if m.group(2) is not None:
            return m.group()  # "10-0-3-17/24" is no host name
        original = text[start:end]
        prefix = ""
        if text[max(0, start - 3) : start] == "ip-":
            prefix = "ip-"
        elif text[max(0, start - 4) : start] == "ec2-":
            prefix = "ec2-"
        if prefix:
            head = start - len(prefix)
            if head and text[head - 1] in _GLUED and not _escaped_at(text, head):
                return m.group()
        elif (start and text[start - 1] in _DASHED_LEFT and not _escaped_at(text, start)) or not (
            text.startswith(".", end) and text[end + 1 : end + 2] in _LETTERS
        ):
            return m.group()
        key = "-" + original
        dashed = self._cache.get(key, "")
        if dashed == "":
            dotted = self._v4_pseudonym(original.replace("-", "."))
            dashed = self._cache[key] = dotted.replace(".", "-") if dotted else None
            if dashed is not None:
                self.pseudonyms.note_address(prefix + original, prefix + dashed)
        if dashed is None:
            return m.group()
        return text[m.start() : start] + dashed

    # ------------------------------------------------------------------ IPv6
    def _run_v6(self, text: str, counts: Counter[str]) -> str:
        lower = lower_keeping_offsets(text)
        pieces, pos = [], 0
        for m in self._v6.finditer(lower):
            found = self._v6_match(lower, text, m)
            if found is not None:
                pieces += [text[pos : m.start()], found[1]]
                pos = m.start() + found[0]
                counts["ipv6"] += 1
        return "".join(pieces) + text[pos:] if pieces else text

    def _v6_match(self, lower: str, text: str, m: re.Match[str]) -> tuple[int, str] | None:
        """(length of the original consumed, replacement) or None to leave it."""
        if m.start() and lower[m.start() - 1] in _V6_LEFT and not _escaped_at(text, m.start()):
            return None
        raw = m.group()
        core, _, plen = raw.partition("/")
        core, _, zone = core.partition("%")
        if "::" not in core and core.count(":") != 7:
            return None  # 09:10:05 and MAC addresses
        while core.endswith(":") and not core.endswith("::"):
            core = core[:-1]  # "fe80::1: no route" ends the address at its last digit
        if (zone or plen) and len(core) != len(raw.partition("/")[0].partition("%")[0]):
            zone = plen = ""  # the zone or prefix belonged to what came after
        try:
            addr = ipaddress.IPv6Address(core)
        except ValueError:
            return None
        out = self.pseudonyms.ipv6(int(addr), public=self.public_ips)
        if out == int(addr):
            return None
        if plen and int(plen) <= 128:
            out &= ((1 << 128) - 1) ^ ((1 << (128 - int(plen))) - 1)
        replacement = str(ipaddress.IPv6Address(out))
        length = len(core)
        if zone:
            length += 1 + len(zone)
            replacement += "%" + zone
        if plen:
            length += 1 + len(plen)
            replacement += "/" + plen
        self.pseudonyms.note_address(text[m.start() : m.start() + length], replacement)
        return length, replacement
