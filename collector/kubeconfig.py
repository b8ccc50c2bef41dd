"""The connection to the API server, read as kubectl reads it: a kubeconfig (explicit,
$KUBECONFIG, ~/.kube/config) or the in-cluster configuration, through the official client.

Where the client and kubectl differ, kubectl wins: a proxy from the environment is not used
for a loopback server, NO_PROXY does not apply to a kubeconfig's proxy-url, and an exec
credential plugin that fails stops the run (the client would log it and go on without
credentials). Every failure here is a ConfigError with one line that says what to fix.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from .diagnosis import (
    Route,
    hide_password,
    plugin_failure,
    proxy_source,
    unusable_client_certificate,
)
from .errors import ConfigError


@dataclass(frozen=True)
class Connection:
    """Where the collector talks to, from kubeconfig or in-cluster config."""

    api_client: k8s.ApiClient
    context: str | None
    server: str
    route: Route  # how requests reach it: to name what fails on the way


def connect(kubeconfig: str | None, context: str | None) -> Connection:
    """Load kubeconfig (explicit, $KUBECONFIG, ~/.kube/config) or in-cluster config."""
    cfg = k8s.Configuration()
    explicit = kubeconfig or os.environ.get("KUBECONFIG")
    default_file = Path(os.path.expanduser("~/.kube/config"))
    path = explicit.split(os.pathsep)[0] if explicit else str(default_file)
    cluster: dict[str, Any] = {}
    user: dict[str, Any] = {}
    user_name: str | None = None
    logged: list[str] = []
    try:
        if explicit or default_file.exists() or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            if not Path(path).exists():
                where = "" if explicit else " and this is not a pod in a cluster"
                raise ConfigError(f"kubeconfig {path} does not exist{where}")
            with _client_log() as logged:
                k8s_config.load_kube_config(
                    config_file=path, context=context, client_configuration=cfg
                )
            _, active = k8s_config.list_kube_config_contexts(config_file=path)
            ctx_name = context or (active or {}).get("name")
            cluster, user_name, user = _entries(path, ctx_name)
        else:
            k8s_config.load_incluster_config(client_configuration=cfg)
            ctx_name = "in-cluster"
    except ConfigException as exc:
        raise ConfigError(f"no usable Kubernetes configuration: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"kubeconfig {path} is not valid YAML{where}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from None
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # Valid YAML, but not shaped like a kubeconfig (a list, a string, a context that is
        # not a mapping): the client trips over it before it can say so.
        raise ConfigError(f"kubeconfig {path} is not a valid kubeconfig: {exc}") from None
    _proxy_as_kubectl(cfg, cluster)
    route = _route(cfg, ctx_name, user_name, cluster)
    _check_credentials(cfg, route, user, logged, Path(os.path.abspath(path)).parent)
    cfg.retries = False  # we retry ourselves, with Retry-After and a budget
    return Connection(api_client=k8s.ApiClient(cfg), context=ctx_name, server=cfg.host, route=route)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _client_log() -> Iterator[list[str]]:
    """The lines the client logs while it loads a kubeconfig. It reports a failing exec
    credential plugin only there, on the root logger (which logging's defaults would print
    as is), and goes on without credentials: caught, those lines become one ConfigError."""
    handler = _Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)


def _entries(path: str, context: str | None) -> tuple[dict[str, Any], str | None, dict[str, Any]]:
    """The cluster entry, the user's name and the user entry of a context. The client has
    read the file already; these only name what fails, so a shape it accepted yields {}."""
    with contextlib.suppress(OSError, yaml.YAMLError):
        doc = yaml.safe_load(Path(path).read_text("utf-8"))
        if isinstance(doc, dict):
            ctx = _named(doc.get("contexts"), context, "context")
            user_name = ctx.get("user") if isinstance(ctx.get("user"), str) else None
            cluster = _named(doc.get("clusters"), ctx.get("cluster"), "cluster")
            return cluster, user_name, _named(doc.get("users"), user_name, "user")
    return {}, None, {}


def _named(items: Any, name: Any, key: str) -> dict[str, Any]:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("name") == name and isinstance(item.get(key), dict):
            return item[key]
    return {}


def _proxy_as_kubectl(cfg: k8s.Configuration, cluster: dict[str, Any]) -> None:
    """The proxy kubectl would use: a kubeconfig's proxy-url for every request (NO_PROXY does
    not apply to it); one from the environment never for a loopback server, as Go's
    ProxyFromEnvironment decides (kind, minikube and `tf-analyze --serve` are local)."""
    if cluster.get("proxy-url"):
        cfg.no_proxy = None
    elif cfg.proxy and _loopback(cfg.host):
        cfg.proxy = None


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _route(
    cfg: k8s.Configuration, context: str | None, user: str | None, cluster: dict[str, Any]
) -> Route:
    proxy = cfg.proxy
    return Route(
        server=cfg.host,
        context=context,
        user=user,
        proxy=hide_password(proxy) if proxy else None,
        proxy_from=proxy_source(proxy, bool(cluster.get("proxy-url")), urlsplit(cfg.host).scheme),
        ca=bool(cfg.ssl_ca_cert),
        client_cert=cfg.cert_file,
        tls_server_name=cfg.tls_server_name,
    )


def _check_credentials(
    cfg: k8s.Configuration, route: Route, user: dict[str, Any], logged: list[str], base: Path
) -> None:
    """Fail now, in one line, on credentials that cannot work: an exec plugin that failed
    while the kubeconfig loaded, a client certificate and key that cannot be loaded."""
    plugin = user.get("exec")
    if isinstance(plugin, dict):
        failed = plugin_failure(plugin, logged, route, base)
        if failed is not None:
            raise failed.exception()
    if cfg.cert_file:
        problem = unusable_client_certificate(cfg.cert_file, cfg.key_file, route)
        if problem:
            raise ConfigError(problem)
