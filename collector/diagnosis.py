"""Why the API server could not be reached, or would not take our credentials: one line.

The kubernetes client reports these failures in ways that say little by themselves: a TLS
failure is an `ApiException(status=0)` raised while handling urllib3's `SSLError` (whose
argument is the ssl module's error, with OpenSSL's verify code), a proxy that says no is
urllib3's `ProxyError`, and a failing exec credential plugin is only a line the client logs
before carrying on without credentials. Each becomes a `Diagnosis`: the cause (an artifact's
message) and the way out a kubectl user knows (added to the one line a failed run ends with).
The exit code follows README's table: 5 when the server, its certificate or the way to it is
at fault, 4 when our own configuration or credentials are. Nothing here prints.
"""

from __future__ import annotations

import os
import re
import shutil
import ssl
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import urllib3

from . import certs
from .errors import CollectError, ConfigError, UnreachableError

# OpenSSL's verify codes (X509_V_ERR_*) that name something other than an unknown issuer.
_NOT_YET_VALID, _EXPIRED, _HOST_MISMATCH, _IP_MISMATCH = 9, 10, 62, 64
# TLS alerts a server sends about the client certificate it was given (or not given).
_CLIENT_CERT_ALERTS = {
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "it has expired",
    "SSLV3_ALERT_BAD_CERTIFICATE": "bad certificate",
    "SSLV3_ALERT_CERTIFICATE_REVOKED": "it was revoked",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "certificate unknown",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE": "unsupported certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "signed by an authority it does not trust",
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "it requires one",
}
_TUNNEL = re.compile(r"Tunnel connection failed: (\d{3})\s*(.*)")
# What a user whose plugin's login ran out types next (the plugin names kubeconfigs carry).
_LOGIN = {
    "aws": "aws sso login",
    "aws-iam-authenticator": "aws sso login",
    "gke-gcloud-auth-plugin": "gcloud auth login",
    "kubelogin": "az login",
}
PLUGINS_DOC = (
    "https://kubernetes.io/docs/reference/access-authn-authz/authentication/"
    "#client-go-credential-plugins"
)


@dataclass(frozen=True)
class Route:
    """How requests reach the API server, to name what went wrong on the way."""

    server: str
    context: str | None = None
    user: str | None = None
    proxy: str | None = None  # its password hidden
    proxy_from: str = ""  # the environment variable, or "proxy-url in the kubeconfig"
    ca: bool = False  # the kubeconfig names a certificate authority for the server
    client_cert: str | None = None  # the file the client reads its certificate from
    tls_server_name: str | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.server).hostname or self.server

    @property
    def who(self) -> str:
        return f"user {self.user}" if self.user else f"context {self.context or '(default)'}"


@dataclass(frozen=True)
class Diagnosis:
    cause: str  # what went wrong: an artifact's message
    fix: str  # the way out
    error: type[CollectError]

    @property
    def line(self) -> str:
        return f"{self.cause}; {self.fix}"

    def exception(self) -> CollectError:
        return self.error(self.line)


def diagnose(exc: BaseException, route: Route) -> Diagnosis:
    """A TLS or proxy failure of one request, as the client raised it."""
    chain = _chain(exc)
    if any(isinstance(e, urllib3.exceptions.ProxyError) for e in chain):
        return _proxy(chain, route)
    for err in chain:
        if isinstance(err, ssl.SSLCertVerificationError):
            return _server_certificate(err, route)
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None and tls.reason in _CLIENT_CERT_ALERTS:
        return _client_certificate_refused(tls.reason, route)
    if tls is not None and client_certificate_expired(route):
        # Over TLS 1.3 a server checks the client certificate after the handshake, and its
        # alert may be lost to the connection closing: an expired one is the likely cause.
        return _client_certificate_refused("SSLV3_ALERT_CERTIFICATE_EXPIRED", route)
    return Diagnosis(
        f"TLS with the API server {route.server} failed ({_words(tls or exc)})",
        "check that the kubeconfig's server: is the API server's https address",
        UnreachableError,
    )


def client_certificate_expired(route: Route) -> str:
    """When our client certificate expired ('2024-03-01 12:00 UTC'); '' if it has not."""
    not_after = certs.expiry(route.client_cert) if route.client_cert else None
    if not_after is None or not_after > datetime.now(timezone.utc):
        return ""
    return _when(not_after)


def unusable_client_certificate(cert_file: str, key_file: str | None, route: Route) -> str | None:
    """Why the kubeconfig's client certificate and key cannot be used, or None."""
    try:
        # No passphrase: never a prompt on the terminal (kubectl reads no encrypted key either).
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_cert_chain(cert_file, key_file, password=lambda: b"")
    except ssl.SSLError as exc:
        why = (
            "its key does not match it"
            if exc.reason == "KEY_VALUES_MISMATCH"
            else "not a PEM certificate and unencrypted key"
        )
        return (
            f"the client certificate of {route.who} in the kubeconfig cannot be used ({why}); "
            "check client-certificate-data and client-key-data (or the files they name)"
        )
    except OSError as exc:
        return f"cannot read the client certificate of {route.who}: {exc.strerror or exc}"
    return None


def plugin_failure(
    plugin: dict[str, Any], logged: list[str], route: Route, base: Path
) -> Diagnosis | None:
    """What the exec credential plugin did wrong, from the lines the client logged."""
    command = str(plugin.get("command") or "")
    if not logged or not command:
        return None
    named = f"the credential plugin {command} of {route.who}"
    if not _installed(command, base):
        hint = _words(str(plugin.get("installHint") or "")) or (
            f"install it, or put the directory that holds it on the PATH ({PLUGINS_DOC})"
        )
        return Diagnosis(f"{named} is not on the PATH", hint, ConfigError)
    last = logged[-1]
    failed = re.match(r"exec: process returned (\d+)\.?\s*(.*)", last, re.DOTALL)
    if failed:
        said = [line.strip() for line in failed.group(2).splitlines() if line.strip()]
        told = f": {_words(said[-1])}" if said else " (its own message is above)"
        cause = f"{named} failed with exit code {failed.group(1)}{told}"
    elif "missing token" in last:
        cause = f"{named} gave neither a token nor a client certificate"
    else:
        cause = f"{named} failed: {_words(last)}"
    login = _LOGIN.get(Path(command).name)
    again = f"log in again (`{login}`)" if login else "log in again"
    return Diagnosis(
        cause, f"run it yourself to see why, and {again} if its login ran out", ConfigError
    )


def proxy_source(proxy: str | None, from_kubeconfig: bool, scheme: str) -> str:
    """Where the client took its proxy from, named as the user set it."""
    if not proxy:
        return ""
    if from_kubeconfig:
        return "proxy-url in the kubeconfig"
    for name in (f"{scheme}_proxy", "all_proxy"):
        for variant in (name, name.upper()):  # the lower case wins, as urllib reads them
            if os.environ.get(variant) == proxy:
                return variant
    return "the environment"


def hide_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


# --- each kind of failure ----------------------------------------------------------------


def _proxy(chain: list[BaseException], route: Route) -> Diagnosis:
    proxy = f"the proxy {route.proxy} ({route.proxy_from})"
    # http.client's own words for the proxy's answer to CONNECT, in the OSError urllib3 wraps.
    said = (str(e) for e in chain if type(e) is OSError)
    tunnel = next((m for text in said if (m := _TUNNEL.fullmatch(text))), None)
    if route.proxy_from.startswith("proxy-url"):  # kubectl applies no NO_PROXY to it either
        setting, around = "the kubeconfig's proxy-url", "fix or remove this cluster's proxy-url"
    else:
        setting = route.proxy_from
        around = f"add {route.host} to NO_PROXY if it is reachable without the proxy"
    if tunnel and tunnel.group(1) == "407":
        return Diagnosis(
            f"{proxy} asks for credentials (407 {tunnel.group(2)})",
            f"put its user and password in {setting} (http://user:password@host:port), or {around}",
            UnreachableError,
        )
    if tunnel:
        return Diagnosis(
            f"{proxy} refused to connect to {route.server} ({tunnel.group(1)} {tunnel.group(2)})",
            f"ask for the API server to be allowed through it, or {around}",
            UnreachableError,
        )
    inner = next((e for e in chain if isinstance(e, OSError) and e.strerror), chain[-1])
    return Diagnosis(
        f"{proxy} could not be reached ({_words(inner)})",
        f"check {setting}, or {around}",
        UnreachableError,
    )


def _server_certificate(err: ssl.SSLCertVerificationError, route: Route) -> Diagnosis:
    what = err.verify_message or "certificate verify failed"
    presented = f"the API server {route.server} presented a certificate"
    if err.verify_code in (_EXPIRED, _NOT_YET_VALID):
        return _dates(presented, err.verify_code, what, route)
    if err.verify_code in (_HOST_MISMATCH, _IP_MISMATCH):
        name = route.tls_server_name or route.host
        return Diagnosis(
            f"{presented} that is not valid for {name} ({what.split(',')[0]})",
            "use a server: address the certificate names, or set tls-server-name: in the "
            "kubeconfig's cluster entry to a name it holds",
            UnreachableError,
        )
    trust = (
        "that the kubeconfig's certificate authority does not trust"
        if route.ca
        else "that this machine does not trust (the kubeconfig names no certificate-authority)"
    )
    return Diagnosis(
        f"{presented} {trust} ({what})",
        "put the CA that signed it in the cluster's certificate-authority-data (or "
        "certificate-authority) in the kubeconfig, or, knowing the connection is then not "
        "verified, set insecure-skip-tls-verify: true",
        UnreachableError,
    )


def _dates(presented: str, code: int, what: str, route: Route) -> Diagnosis:
    """An expired (or not yet valid) server certificate, with its date when it can be read."""
    now = datetime.now(timezone.utc)
    clock = f"or this machine's clock is wrong (it says {_when(now)})"
    dates = None if route.proxy else certs.server_validity(route.server, route.tls_server_name)
    if code == _NOT_YET_VALID:
        since = f" until {_when(dates[0])}" if dates and dates[0] > now else f" yet ({what})"
        return Diagnosis(f"{presented} that is not valid{since}", clock[3:], UnreachableError)
    until = f" that expired on {_when(dates[1])}" if dates and dates[1] < now else f" ({what})"
    return Diagnosis(
        f"{presented}{until}",
        f"the cluster's certificates need renewing (kubeadm: kubeadm certs renew all), {clock}",
        UnreachableError,
    )


def _client_certificate_refused(alert: str, route: Route) -> Diagnosis:
    if not route.client_cert:
        return Diagnosis(
            f"the API server {route.server} asks for a client certificate and {route.who} "
            "has none in the kubeconfig",
            "get a kubeconfig with client-certificate-data for this cluster",
            ConfigError,
        )
    expired = client_certificate_expired(route)
    why = f"it expired on {expired}" if expired else _CLIENT_CERT_ALERTS[alert]
    return Diagnosis(
        f"the API server {route.server} refused the client certificate of {route.who}: {why}",
        "get a new client certificate (or kubeconfig) for this cluster from its admin or cloud",
        ConfigError,
    )


# --- helpers -----------------------------------------------------------------------------


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and every one it came from or wraps (urllib3 keeps them in args)."""
    found: list[BaseException] = []
    todo: list[Any] = [exc]
    while todo:
        err = todo.pop(0)
        if not isinstance(err, BaseException) or any(err is f for f in found):
            continue
        found.append(err)
        todo += [err.__cause__, err.__context__, getattr(err, "reason", None), *err.args]
    return found


def _installed(command: str, base: Path) -> bool:
    if os.sep in command:  # a path: the client runs it from the kubeconfig's directory
        return os.access(base / command, os.X_OK)
    return shutil.which(command) is not None


def _when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _words(what: object) -> str:
    """One line of text, whatever it held; an OSError's own words without its errno."""
    text = what.strerror if isinstance(what, OSError) and what.strerror else str(what)
    return " ".join(text.split())[:300]
