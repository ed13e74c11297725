"""Serving ``/metrics`` (and the dashboard) over HTTPS to callers the cluster allows.

Every kuota process that exposes metrics (the scheduler, the webhook,
``kuota-multikueue``) serves them the way Kueue's do through controller-runtime's
secure serving (docs/metrics.md#access):

- HTTPS, with the serving pair of kuota's certificates (``--metrics-cert-dir``:
  ``tls.crt``/``tls.key``, reloaded in place when they change); without one, a
  self-signed pair made at start, as controller-runtime does;
- a request without a bearer token, or with one the API server does not
  know, gets 401; an identity that may not ``get`` the non-resource URL
  ``/metrics`` gets 403 (:mod:`scheduler.kube.access_review`).

``--no-metrics-secure`` serves plain HTTP without checks, and only on a
loopback address (a process in a test, a sidecar scraping locally); any
other address is refused at start, so metrics never leave a machine
unauthenticated.  :func:`guard` is the same check for any aiohttp
application (the dashboard decides per view what to ask).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from aiohttp import web
from aiohttp.typedefs import Middleware

from certs.generate import KeyPair, issue, new_ca, write_private
from certs.reload import CertificateReloader
from scheduler.kube.access_review import Attributes, ReviewFailed, User

log = logging.getLogger("kuota.serving")
METRICS_PATH = "/metrics"
CERT_POLL_SECONDS = 10.0
CERT_WAIT_WARNING_SECONDS = 60.0
"""How often a process still waiting for its metrics certificate says so."""
USER = web.RequestKey("user", User)
"""Where :func:`guard` leaves the authenticated :class:`User` on a request."""


class Reviewer(Protocol):
    async def authenticate(self, token: str) -> User | None: ...

    async def authorize(self, user: User, attributes: Attributes) -> bool: ...


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header: pure."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def request_user(request: web.Request) -> User:
    """The user :func:`guard` authenticated for ``request``."""
    return request[USER]


AttributesFor = Callable[[web.Request], Attributes | None]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def guard(reviewer: Reviewer, attributes_for: AttributesFor) -> Middleware:
    """Middleware: authenticate the bearer token, authorize what ``attributes_for`` asks.

    ``attributes_for`` returning None lets the request through unchecked (a
    login page, static files).
    """

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        attributes = attributes_for(request)
        if attributes is None:
            return await handler(request)
        token = bearer_token(request.headers.get("Authorization"))
        if token is None:
            return _unauthorized("no bearer token")
        try:
            user = await reviewer.authenticate(token)
            if user is None:
                return _unauthorized("the token is not valid")
            allowed = await reviewer.authorize(user, attributes)
        except ReviewFailed as failure:
            log.warning("access review failed", extra={"error": str(failure)})
            return web.Response(status=500, text=f"Internal Server Error: {failure}\n")
        if not allowed:
            return web.Response(
                status=403,
                text=f"Forbidden: user {user.name} may not {attributes.describe()}\n",
            )
        request[USER] = user
        return await handler(request)

    return check


def _unauthorized(why: str) -> web.Response:
    return web.Response(
        status=401, text=f"Unauthorized: {why}\n", headers={"WWW-Authenticate": "Bearer"}
    )


def metrics_app(render: Callable[[], bytes], reviewer: Reviewer | None) -> web.Application:
    """``/metrics`` alone; behind :func:`guard` unless ``reviewer`` is None (plain, loopback)."""

    async def serve(_: web.Request) -> web.Response:
        return web.Response(body=render(), headers={"Content-Type": CONTENT_TYPE})

    middlewares = []
    if reviewer is not None:
        asked = Attributes(verb="get", path=METRICS_PATH)
        middlewares.append(
            guard(reviewer, lambda request: asked if request.path == METRICS_PATH else None)
        )
    app = web.Application(middlewares=middlewares)
    app.router.add_get(METRICS_PATH, serve)
    return app


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


# --- flags --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how a process serves an HTTPS (or loopback HTTP) endpoint."""

    host: str
    port: int
    secure: bool = True
    cert_dir: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.secure else "http"


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` means every interface) as (host, port): pure."""
    host, _, port = address.rpartition(":")
    return (host.strip("[]") or "0.0.0.0"), int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost): pure."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def add_metrics_arguments(
    parser: argparse.ArgumentParser, *, default_address: str | None, default_help: str = ""
) -> None:
    """``--metrics-bind-address``, ``--metrics-secure`` and ``--metrics-cert-dir``."""
    parser.add_argument(
        "--metrics-bind-address",
        default=default_address,
        metavar="HOST:PORT",
        help=f"where /metrics is served (default {default_help or default_address}; an empty "
        'HOST is every interface; "0" or empty: not served)',
    )
    parser.add_argument(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="HTTPS with TokenReview and SubjectAccessReview (default); --no-metrics-secure "
        "serves plain HTTP, allowed on a loopback address only",
    )
    parser.add_argument(
        "--metrics-cert-dir",
        type=Path,
        help="directory with tls.crt and tls.key for /metrics (default: a self-signed pair)",
    )


def metrics_endpoint(args: argparse.Namespace) -> Endpoint | None | str:
    """The metrics endpoint the flags ask for, None for none, or what is wrong: pure."""
    return endpoint_for(
        args.metrics_bind_address,
        secure=args.metrics_secure,
        cert_dir=args.metrics_cert_dir,
        flag="--metrics-bind-address",
    )


def endpoint_for(
    address: str, *, secure: bool, cert_dir: Path | None, flag: str
) -> Endpoint | None | str:
    """The endpoint at ``address`` (``flag`` names it in errors), None for none, or what is
    wrong with it: pure.  Plain HTTP is allowed on a loopback address only."""
    if address in ("", "0"):
        return None
    try:
        host, port = split_address(address)
    except ValueError:
        return f"{flag} must be HOST:PORT, got {address!r}"
    if not secure and not is_loopback(host):
        return (
            f"{flag}: plain HTTP serves without authentication, so only on a loopback "
            f"address (127.0.0.1, ::1, localhost), not {host!r}"
        )
    return Endpoint(host, port, secure=secure, cert_dir=cert_dir)


# --- serving ------------------------------------------------------------------------------


def self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    """A throw-away CA and serving pair for ``host`` (and localhost) under ``directory``."""
    ca: KeyPair = new_ca("kuota-self-signed-ca", valid_for=timedelta(days=365))
    names = {"localhost"}
    ips = {"127.0.0.1"}
    try:
        ips.add(str(ipaddress.ip_address(host)))
    except ValueError:
        names.add(host)
    serving = issue(
        ca,
        common_name="kuota",
        dns_names=sorted(names),
        ip_addresses=sorted(ips - {"0.0.0.0"}),
        server=True,
        valid_for=timedelta(days=365),
    )
    cert, key = directory / "tls.crt", directory / "tls.key"
    cert.write_bytes(serving.cert_pem + ca.cert_pem)
    write_private(key, serving.key_pem)
    return cert, key


async def serve(
    app: web.Application, endpoint: Endpoint, *, name: str
) -> tuple[web.AppRunner, asyncio.Task[None]]:
    """Serve ``app`` on ``endpoint``; the runner, and the task that opens and keeps the site.

    Over HTTPS the site opens once the certificate pair loads (a Secret mounted
    before its issuer wrote it fills in later; the process does not wait for it),
    then the pair is reloaded in place whenever the files change.
    """
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    if not endpoint.secure:
        await web.TCPSite(runner, endpoint.host, endpoint.port).start()
        _announce(endpoint, name)
        return runner, asyncio.get_running_loop().create_task(_forever(), name=f"{name}-site")
    if endpoint.cert_dir is not None:
        cert, key = endpoint.cert_dir / "tls.crt", endpoint.cert_dir / "tls.key"
    else:
        scratch = Path(tempfile.mkdtemp(prefix=f"kuota-{name}-tls-"))
        cert, key = self_signed(scratch, endpoint.host)
        log.info("no certificate given: serving with a self-signed one", extra={"endpoint": name})
    reloader = CertificateReloader(cert, key)

    async def open_site() -> None:
        site = web.TCPSite(runner, endpoint.host, endpoint.port, ssl_context=reloader.context)
        await site.start()
        _announce(endpoint, name)

    async def open_then_reload() -> None:
        if not reloader.loaded:
            while not await reloader.wait_until_loaded(CERT_WAIT_WARNING_SECONDS):
                log.warning(
                    "no serving certificate yet; /metrics waits for it",
                    extra={"endpoint": name, "cert": str(cert)},
                )
            await open_site()
        await reloader.watch(CERT_POLL_SECONDS)

    if reloader.check():  # the usual case: the pair is there, open at once
        await open_site()

    task = asyncio.get_running_loop().create_task(open_then_reload(), name=f"{name}-site")
    return runner, task


async def _forever() -> None:
    await asyncio.Event().wait()


def _announce(endpoint: Endpoint, name: str) -> None:
    log.info(
        "serving",
        extra={"endpoint": name, "address": f"{endpoint.scheme}://{endpoint.host}:{endpoint.port}"},
    )


async def stop(runner: web.AppRunner, keeper: asyncio.Task[None] | None) -> None:
    """Stop what :func:`serve` started (``keeper`` None: a runner started otherwise)."""
    if keeper is not None:
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
    await runner.cleanup()


__all__ = [
    "USER",
    "Endpoint",
    "Reviewer",
    "add_metrics_arguments",
    "bearer_token",
    "guard",
    "endpoint_for",
    "is_loopback",
    "metrics_app",
    "metrics_endpoint",
    "request_user",
    "self_signed",
    "serve",
    "split_address",
    "stop",
]
