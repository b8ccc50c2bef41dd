"""The dates a certificate is valid between, to say when one expired.

The ssl module verifies certificates but does not show a failed one's dates, and the
collector has no X.509 library (the kubernetes client does not need one), so this reads the
one field it wants from the DER itself: Certificate -> tbsCertificate -> validity.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

_UTC_TIME, _GENERALIZED_TIME, _VERSION = 0x17, 0x18, 0xA0
FETCH_SECONDS = 3.0


def validity(der: bytes) -> tuple[datetime, datetime]:
    """(notBefore, notAfter) of a DER certificate; ValueError when it is not one."""
    try:
        _, start, end = next(_elements(der, 0, len(der)))  # Certificate
        _, start, end = next(_elements(der, start, end))  # tbsCertificate
        fields = list(_elements(der, start, end))
        if fields[0][0] == _VERSION:
            fields = fields[1:]
        _, start, end = fields[3]  # serialNumber, signature, issuer, validity
        times = [_time(der[s:e], tag) for tag, s, e in _elements(der, start, end)]
        return times[0], times[1]
    except (IndexError, StopIteration, UnicodeDecodeError) as exc:
        raise ValueError("not a DER certificate") from exc


def expiry(pem_file: str) -> datetime | None:
    """notAfter of the first certificate in a PEM file; None when it cannot be read."""
    with contextlib.suppress(OSError, ValueError):
        text = Path(pem_file).read_text("ascii", errors="replace")
        begin = text.index("-----BEGIN CERTIFICATE-----")
        end = text.index("-----END CERTIFICATE-----", begin) + len("-----END CERTIFICATE-----")
        return validity(ssl.PEM_cert_to_DER_cert(text[begin:end]))[1]
    return None


def server_validity(server: str, server_name: str | None) -> tuple[datetime, datetime] | None:
    """The dates of the certificate an https server presents, read without verifying it
    (it has just failed verification); None when it cannot be had."""
    url = urlsplit(server)
    if url.scheme != "https" or not url.hostname:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with contextlib.suppress(OSError, ValueError):
        address = (url.hostname, url.port or 443)
        with (
            socket.create_connection(address, timeout=FETCH_SECONDS) as sock,
            ctx.wrap_socket(sock, server_hostname=server_name or url.hostname) as tls,
        ):
            der = tls.getpeercert(binary_form=True)
        return validity(der) if der else None
    return None


def _elements(der: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(tag, start, end) of each DER element between pos and end."""
    while pos < end:
        tag, length = der[pos], der[pos + 1]
        pos += 2
        if length & 0x80:
            size = length & 0x7F
            length = int.from_bytes(der[pos : pos + size], "big")
            pos += size
        yield tag, pos, pos + length
        pos += length


def _time(raw: bytes, tag: int) -> datetime:
    text = raw.decode("ascii").rstrip("Z")
    if tag == _UTC_TIME:  # two-digit years: 50-99 are 19xx (RFC 5280, 4.1.2.5.1)
        century = "19" if int(text[:2]) >= 50 else "20"
        text = century + text
    elif tag != _GENERALIZED_TIME:
        raise ValueError("not a time")
    return datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
