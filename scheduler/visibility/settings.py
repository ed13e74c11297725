"""Where the visibility API listens, from the Configuration and the command line: pure.

See docs/configuration.md#the-visibility-server.  As in Kueue, the server
runs when the feature gate ``VisibilityOnDemand`` is on (its default) and
listens on ``visibilityServer.bindAddress`` (default ``0.0.0.0``: every
interface, so the API server can reach the pod) and ``visibilityServer.bindPort``
(default 8082).  ``kuota-scheduler --visibility-bind-address HOST:PORT``
overrides both (the local cluster runs several replicas on one machine,
each on its own loopback port); the override is logged, never silent.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scheduler.api.config import Configuration
from scheduler.api.operational import VisibilityServerOptions, visibility_server

GATE: Final = "VisibilityOnDemand"
DEFAULT_BIND_ADDRESS: Final = "0.0.0.0"
DEFAULT_BIND_PORT: Final = 8082


class InvalidAddress(ValueError):
    """A bind address or port that cannot be listened on; the message names where it came from."""


@dataclass(frozen=True, slots=True)
class Listen:
    host: str
    port: int
    overridden: bool = False
    """The command line replaced the Configuration's ``visibilityServer``."""


def _checked_host(host: str, where: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise InvalidAddress(f"{where}: {host!r} is not an IP address") from None
    return host


def parse_host_port(text: str, where: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) as a pair; port 0 means any free port: pure."""
    host, separator, port_text = text.rpartition(":")
    if not separator or not port_text.isdigit():
        raise InvalidAddress(f"{where}: expected HOST:PORT, got {text!r}")
    host = host.removeprefix("[").removesuffix("]")
    port = int(port_text)
    if port > 65535:
        raise InvalidAddress(f"{where}: port {port} is above 65535")
    return _checked_host(host, where), port


def listen_address(config: Configuration | None, flag: str | None) -> Listen | None:
    """Where to serve; None when the feature gate turns the server off: pure."""
    options = visibility_server(config) if config is not None else VisibilityServerOptions()
    if not options.enabled:
        return None
    given = options.bind_address is not None or options.bind_port is not None
    if flag is not None:
        host, port = parse_host_port(flag, "--visibility-bind-address")
        return Listen(host, port, overridden=given)
    host = options.bind_address or DEFAULT_BIND_ADDRESS
    port = options.bind_port if options.bind_port is not None else DEFAULT_BIND_PORT
    if not 1 <= port <= 65535:
        raise InvalidAddress(f"visibilityServer.bindPort: must be 1..65535, got {port!r}")
    return Listen(_checked_host(host, "visibilityServer.bindAddress"), port)


def cert_dir_of(flag: str | None) -> Path | None:
    """The directory holding ``tls.crt`` and ``tls.key``; None: a self-signed pair: pure."""
    return Path(flag) if flag else None


__all__ = [
    "DEFAULT_BIND_ADDRESS",
    "DEFAULT_BIND_PORT",
    "GATE",
    "InvalidAddress",
    "Listen",
    "cert_dir_of",
    "listen_address",
    "parse_host_port",
]
