"""Every way the road to the API server can fail ends in one line on stderr that names the
cause and the way out, with README's exit code (4: our configuration or credentials, 5: the
server or the way to it), and nothing at the output path: untrusted, expired and misnamed
server certificates, proxies that say no, exec credential plugins missing or failing, client
certificates expired or unusable. `insecure-skip-tls-verify: true` is honoured as kubectl
honours it. Each case runs the real tf-collect against a local server misbehaving that way."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import functools
import ipaddress
import os
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from faultkit import FaultyEmulator
from scenariokit import SAMPLES, command
from scenarioloader import load_scenario

from analyzer.bundle import Bundle

EXPIRED_ON = dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.timezone.utc)

# --- certificates ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    cert: bytes  # PEM
    key: bytes  # PEM


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _issue(
    name: str,
    signer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None,
    *,
    ca: bool = False,
    sans: tuple[str, ...] = ("127.0.0.1", "localhost"),
    until: dt.datetime | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for `name`, signed by `signer` (self-signed without one)."""
    key = _key()
    now = dt.datetime.now(dt.timezone.utc)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_cert, issuer_key = signer or (None, key)
    not_after = until or now + dt.timedelta(days=30)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_cert.subject if issuer_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(min(now, not_after) - dt.timedelta(days=60))
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans and not ca:
        names = [
            x509.IPAddress(ipaddress.ip_address(s)) if s[0].isdigit() else x509.DNSName(s)
            for s in sans
        ]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


def _pair(made: tuple[x509.Certificate, ec.EllipticCurvePrivateKey]) -> Pair:
    return Pair(made[0].public_bytes(serialization.Encoding.PEM), _pem_key(made[1]))


@dataclass(frozen=True)
class Pki:
    ca: bytes  # the CA the kubeconfigs trust
    server: Pair  # signed by it, for 127.0.0.1
    self_signed: Pair
    expired: Pair  # signed by it, expired on EXPIRED_ON
    misnamed: Pair  # signed by it, for kubernetes.invalid only
    client_expired: Pair  # a client certificate signed by it, expired on EXPIRED_ON
    stranger: Pair  # a client certificate whose key is not its own


@pytest.fixture(scope="module")
def pki() -> Pki:
    ca = _issue("tf-test-ca", ca=True)
    other = _issue("other")
    return Pki(
        ca=ca[0].public_bytes(serialization.Encoding.PEM),
        server=_pair(_issue("api", ca)),
        self_signed=_pair(_issue("api")),
        expired=_pair(_issue("api", ca, until=EXPIRED_ON)),
        misnamed=_pair(_issue("api", ca, sans=("kubernetes.invalid",))),
        client_expired=_pair(_issue("me", ca, sans=(), until=EXPIRED_ON)),
        stranger=Pair(other[0].public_bytes(serialization.Encoding.PEM), _pem_key(_key())),
    )


# --- servers that misbehave --------------------------------------------------------------


class _Listener:
    """A loopback TCP server whose connections `serve` handles, each on its own thread."""

    def __init__(self, serve: Callable[[socket.socket], None]) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            self._serve(conn)

    def close(self) -> None:
        self.sock.close()


class TLSRelay(_Listener):
    """TLS in front of a plain HTTP server (the emulator), or of nothing: a handshake the
    client refuses needs no backend. `client_ca` makes it require a client certificate."""

    def __init__(
        self, tmp: Path, pair: Pair, backend: int | None = None, client_ca: bytes | None = None
    ) -> None:
        self.ctx: ssl.SSLContext | _Switching = _server_context(tmp, pair)
        if client_ca:
            self.ctx.verify_mode = ssl.CERT_REQUIRED
            self.ctx.load_verify_locations(cadata=client_ca.decode())
            # TLS 1.2 refuses the certificate in the handshake; over 1.3 the refusal comes
            # after it, as an alert or an EOF, whichever the client reads first.
            self.ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        self.backend = backend
        super().__init__(self._relay)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _relay(self, conn: socket.socket) -> None:
        with self.ctx.wrap_socket(conn, server_side=True) as tls:
            if self.backend is None:
                tls.recv(1)  # a client that accepted the handshake: say nothing
                return
            with socket.create_connection(("127.0.0.1", self.backend)) as plain:
                threading.Thread(target=_pump, args=(plain, tls), daemon=True).start()
                _pump(tls, plain)


def _server_context(tmp: Path, pair: Pair) -> ssl.SSLContext:
    (tmp / "server.crt").write_bytes(pair.cert)
    (tmp / "server.key").write_bytes(pair.key)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp / "server.crt", tmp / "server.key")
    return ctx


class _Switching:
    """Stands in for a server's SSLContext: each handshake uses the context `pick` gives."""

    def __init__(self, pick: Callable[[], ssl.SSLContext]) -> None:
        self.pick = pick
        self.lock = threading.Lock()

    def wrap_socket(self, sock: socket.socket, **kwargs: Any) -> ssl.SSLSocket:
        with self.lock:
            ctx = self.pick()
        return ctx.wrap_socket(sock, **kwargs)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


class Proxy(_Listener):
    """An HTTP proxy that answers every CONNECT with the same refusal."""

    def __init__(self, answer: str) -> None:
        self.requests: list[str] = []
        self.answer = f"HTTP/1.1 {answer}\r\nContent-Length: 0\r\n\r\n".encode()
        super().__init__(self._refuse)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _refuse(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head and (chunk := conn.recv(4096)):
            head += chunk
        self.requests.append(head.split(b"\r\n")[0].decode())
        conn.sendall(self.answer)


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return sock.getsockname()[1]


# --- the table ---------------------------------------------------------------------------


@dataclass
class Setup:
    """What one row runs tf-collect with, and what it starts to misbehave."""

    server: str
    cluster: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    words: tuple[str, ...] = ()  # the line must hold each


def _collect(kubeconfig: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """tf-collect with no proxy settings but `env`'s (an empty lower-case https_proxy would
    switch off an upper-case one, as urllib reads them)."""
    base = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return subprocess.run(
        command("--kubeconfig", str(kubeconfig), "-o", str(out), "--request-timeout", "5"),
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **env},
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _kubeconfig(path: Path, setup: Setup) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": setup.server, **setup.cluster}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
        "users": [{"name": "u", "user": setup.user}],
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


Row = Callable[[Pki, Path, contextlib.ExitStack], Setup]


def _tls(pair: Callable[[Pki], Pair], **words: str) -> Row:
    def setup(pki: Pki, tmp: Path, stack: contextlib.ExitStack) -> Setup:
        relay = TLSRelay(tmp, pair(pki))
        stack.callback(relay.close)
        ca = {"certificate-authority-data": _b64(pki.ca)}
        return Setup(relay.url, ca, words=(relay.url, *words.values()))

    return setup


def _proxy(answer: str, *, in_kubeconfig: bool, **words: str) -> Row:
    def setup(pki: Pki, tmp: Path, stack: contextlib.ExitStack) -> Setup:
        proxy = Proxy(answer)
        stack.callback(proxy.close)
        # Reachable only through the proxy, which never lets it be: no traffic leaves
        # loopback (the proxy, not the client, would resolve the name).
        server = "https://kubernetes.test:6443"
        cluster = {"certificate-authority-data": _b64(pki.ca)}
        env = {}
        if in_kubeconfig:
            cluster["proxy-url"] = proxy.url
        else:
            env["HTTPS_PROXY"] = proxy.url
        return Setup(server, cluster, env=env, words=(proxy.url, *words.values()))

    return setup


def _proxy_down(pki: Pki, tmp: Path, stack: contextlib.ExitStack) -> Setup:
    url = f"http://127.0.0.1:{_closed_port()}"
    env = {"HTTPS_PROXY": url}
    words = (url, "HTTPS_PROXY", "could not be reached", "NO_PROXY")
    return Setup("https://kubernetes.test:6443", env=env, words=words)


def _plugin(script: str | None, **words: str) -> Row:
    def setup(pki: Pki, tmp: Path, stack: contextlib.ExitStack) -> Setup:
        command = "tf-test-no-such-plugin"
        if script is not None:
            plugin = tmp / "bin" / "aws"
            plugin.parent.mkdir()
            plugin.write_text(script)
            plugin.chmod(0o755)
            command = str(plugin)
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": command,
                "args": ["eks", "get-token", "--cluster-name", "prod"],
                "installHint": "Install tf-test-no-such-plugin:\n  see https://example.invalid/install",
            }
        }
        return Setup("https://127.0.0.1:1", user=user, words=(command, *words.values()))

    return setup


def _client_cert(
    pair: Callable[[Pki], Pair], relay_requires_it: bool, *, names_server: bool = True, **words: str
) -> Row:
    def setup(pki: Pki, tmp: Path, stack: contextlib.ExitStack) -> Setup:
        if relay_requires_it:  # an mTLS front: the handshake itself says no
            relay = TLSRelay(tmp, pki.server, client_ca=pki.ca)
            stack.callback(relay.close)
        else:  # kube-apiserver: TLS goes through, every request is answered 401
            emu, relay = _emulated(stack, tmp, pki.server)
            emu.faults.add(status=401, message="Unauthorized")
        mine = pair(pki)
        user = {
            "client-certificate-data": _b64(mine.cert),
            "client-key-data": _b64(mine.key),
        }
        ca = {"certificate-authority-data": _b64(pki.ca)}
        named = (relay.url,) if names_server else ()
        return Setup(relay.url, ca, user, words=(*named, *words.values()))

    return setup


@functools.cache
def _scenario() -> Any:
    return load_scenario(SAMPLES / "healthy")


def _emulated(
    stack: contextlib.ExitStack, tmp: Path, pair: Pair
) -> tuple[FaultyEmulator, TLSRelay]:
    """The emulated cluster behind TLS with `pair`, both stopped with the stack."""
    emu = stack.enter_context(FaultyEmulator(_scenario()))
    relay = TLSRelay(tmp, pair, backend=emu.port)
    stack.callback(relay.close)
    return emu, relay


FAILS_TO_EXEC_PLUGIN = (
    "#!/bin/sh\necho 'retrying in 1s' >&2\necho 'Error: the SSO session has expired' >&2\nexit 1\n"
)
ROWS: dict[str, tuple[Row, int]] = {
    "server-cert-unknown-ca": (
        _tls(
            lambda p: p.self_signed,
            what="presented a certificate that the kubeconfig's certificate authority does "
            "not trust (self-signed certificate)",
            fix="certificate-authority-data",
            risky="insecure-skip-tls-verify: true",
        ),
        5,
    ),
    "server-cert-expired": (
        _tls(lambda p: p.expired, what="expired on 2024-03-01 12:00 UTC", fix="kubeadm certs"),
        5,
    ),
    "server-cert-other-name": (
        _tls(
            lambda p: p.misnamed,
            what="is not valid for 127.0.0.1 (IP address mismatch",
            fix="tls-server-name",
        ),
        5,
    ),
    "proxy-407-from-env": (
        _proxy(
            "407 Proxy Authentication Required",
            in_kubeconfig=False,
            source="(HTTPS_PROXY) asks for credentials (407 Proxy Authentication Required)",
            fix="NO_PROXY",
        ),
        5,
    ),
    "proxy-refuses-connect-from-kubeconfig": (
        _proxy(
            "403 Forbidden",
            in_kubeconfig=True,
            what="(proxy-url in the kubeconfig) refused to connect to "
            "https://kubernetes.test:6443 (403 Forbidden)",
            fix="proxy-url",
        ),
        5,
    ),
    "proxy-down": (_proxy_down, 5),
    "exec-plugin-missing": (
        _plugin(
            None,
            what="is not on the PATH",
            hint="Install tf-test-no-such-plugin: see https://example.invalid/install",
        ),
        4,
    ),
    "exec-plugin-fails": (
        _plugin(
            FAILS_TO_EXEC_PLUGIN,
            what="failed with exit code 1: Error: the SSO session has expired",
            fix="`aws sso login`",
        ),
        4,
    ),
    "client-cert-expired-401": (
        _client_cert(
            lambda p: p.client_expired,
            relay_requires_it=False,
            what="refused the credentials of context ctx (401: Unauthorized): its client "
            "certificate expired on 2024-03-01 12:00 UTC",
        ),
        4,
    ),
    "client-cert-expired-tls-alert": (
        _client_cert(
            lambda p: p.client_expired,
            relay_requires_it=True,
            what="refused the client certificate of user u: it expired on 2024-03-01 12:00 UTC",
        ),
        4,
    ),
    "client-key-not-its-own": (
        _client_cert(
            lambda p: p.stranger,
            relay_requires_it=True,
            names_server=False,
            what="the client certificate of user u in the kubeconfig cannot be used "
            "(its key does not match it)",
        ),
        4,
    ),
}


@pytest.fixture()
def stack() -> Iterator[contextlib.ExitStack]:
    with contextlib.ExitStack() as stack:
        yield stack


@pytest.mark.parametrize("row", ROWS, ids=list(ROWS))
def test_connection_failure_is_one_line(
    row: str, pki: Pki, tmp_path: Path, stack: contextlib.ExitStack
) -> None:
    make, code = ROWS[row]
    setup = make(pki, tmp_path, stack)
    out = tmp_path / "out"
    out.mkdir()
    proc = _collect(_kubeconfig(tmp_path / "kubeconfig", setup), out / "b.tar.zst", setup.env)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, proc.stderr
    assert lines[0].startswith("tf-collect: "), lines[0]
    for words in setup.words:
        assert words in lines[0], (words, lines[0])
    assert list(out.iterdir()) == []


def test_insecure_skip_tls_verify_is_honoured_as_kubectl_does(
    pki: Pki, tmp_path: Path, stack: contextlib.ExitStack
) -> None:
    # A self-signed server, no CA: the kubeconfig says not to verify, so it is not verified,
    # and without urllib3's warning on every request. A proxy in the environment is not used
    # for a loopback server, as kubectl decides (this one would refuse everything).
    _, relay = _emulated(stack, tmp_path, pki.self_signed)
    proxy = Proxy("407 Proxy Authentication Required")
    stack.callback(proxy.close)
    setup = Setup(relay.url, {"insecure-skip-tls-verify": True})
    out = tmp_path / "b.tar.zst"
    proc = _collect(_kubeconfig(tmp_path / "kubeconfig", setup), out, {"HTTPS_PROXY": proxy.url})
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "Unverified" not in proc.stderr, proc.stderr
    assert proxy.requests == []
    assert Bundle.open(out).manifest["cluster"]["server_version"].startswith("v1.")


def test_tls_failure_later_in_the_run_is_a_failed_artifact(
    pki: Pki, tmp_path: Path, stack: contextlib.ExitStack
) -> None:
    # The first connection is trusted; every later one presents a certificate nobody
    # trusts (a server behind a load balancer whose replicas disagree).
    _, relay = _emulated(stack, tmp_path, pki.server)
    good, bad = relay.ctx, _server_context(tmp_path, pki.self_signed)
    served = iter([good])
    relay.ctx = _Switching(lambda: next(served, bad))  # type: ignore[arg-type]
    setup = Setup(relay.url, {"certificate-authority-data": _b64(pki.ca)})
    out = tmp_path / "b.tar.zst"
    proc = _collect(_kubeconfig(tmp_path / "kubeconfig", setup), out, {})
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    failed = [a for a in Bundle.open(out).artifacts if a["status"] == "error"]
    assert failed
    for art in failed:
        assert art["message"].startswith(f"the API server {relay.url} presented a certificate")
        assert "\n" not in art["message"]
