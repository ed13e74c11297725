"""The visibility API server: HTTPS routes in front of the scheduler's queues.

See docs/visibility.md.  It runs inside the scheduler process (every
replica, leader or standby: each keeps the same queues, fed by its
informers) because the answer *is* the scheduler's in-memory queue order;
another process would have to rebuild that order.  The API server reaches
it through an ``APIService`` (``v1beta2`` and ``v1beta1`` of
``visibility.kueue.x-k8s.io``) and a Service.

Each request is answered in the event loop between two scheduler turns
(the engine is never read while a cycle runs), in this order:

1. ``/healthz``, ``/livez``, ``/readyz``: no identity needed;
2. the front proxy's identity (:mod:`.identity`), else 401;
3. discovery and ``/openapi/v2`` (:mod:`.discovery`): any authenticated caller (the
   API server's default RBAC lets every authenticated user read discovery);
4. ``pendingworkloads``: the query (``limit``, ``offset``; 400 if not integers),
   RBAC's answer (:mod:`.access`, 403 with the API server's wording), then the
   page (:mod:`.pages`, 404 for an unknown queue).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from scheduler.kube.rest import RestClient, RestError
from scheduler.version import kuota_version
from scheduler.visibility import discovery, wire
from scheduler.visibility.access import AccessReviewer, Question
from scheduler.visibility.identity import (
    AUTHENTICATION_CONFIGMAP,
    FrontProxy,
    User,
    authenticate,
    front_proxy,
)
from scheduler.visibility.pages import PendingSource, cluster_queue_page, local_queue_page
from scheduler.visibility.tls import ServingTls

log = logging.getLogger("kuota.visibility")
PREFIX: Final = f"/apis/{wire.GROUP}"
HEALTH_PATHS: Final = ("/healthz", "/livez", "/readyz")
JSON: Final = "application/json"


@dataclass(frozen=True)
class VisibilitySettings:
    host: str
    port: int
    cert_dir: Path | None = None
    """``tls.crt`` and ``tls.key`` (None: a self-signed pair made at start)."""
    front_proxy_refresh_seconds: float = 60.0
    """How often the API server's front-proxy settings are read again."""
    cert_check_seconds: float = 10.0


def _json(payload: dict[str, Any], status: int = 200, **headers: str) -> web.Response:
    return web.Response(
        body=json.dumps(payload, separators=(",", ":")).encode(),
        status=status,
        content_type=JSON,
        headers=headers,
    )


def _failure(payload: dict[str, Any]) -> web.Response:
    return _json(payload, status=int(payload["code"]))


def _common_name(request: web.Request) -> str | None:
    """The CN of the client certificate the handshake verified (None: none was sent)."""
    transport = request.transport
    peer = transport.get_extra_info("peercert") if transport is not None else None
    if not peer:
        return None
    for rdn in peer.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
USER: Final = web.RequestKey("user", User)
"""The caller the front proxy vouched for, set on every authenticated request."""


class VisibilityApi:
    """The routes, over a pending-workload source, an RBAC reviewer and front-proxy settings."""

    def __init__(self, source: PendingSource, reviewer: AccessReviewer) -> None:
        self.source = source
        self.reviewer = reviewer
        self.front_proxy = FrontProxy()
        self._openapi, self._openapi_etag = discovery.encoded(
            discovery.openapi_v2("kuota visibility-server", kuota_version())
        )

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._authenticated])
        for path in HEALTH_PATHS:
            app.router.add_get(path, self._health)
        app.router.add_get("/apis", self._group_list)
        app.router.add_get("/apis/", self._group_list)
        app.router.add_get(PREFIX, self._group)
        app.router.add_get(PREFIX + "/", self._group)
        app.router.add_get(PREFIX + "/{version}", self._resources)
        app.router.add_get(PREFIX + "/{version}/", self._resources)
        app.router.add_get("/openapi/v2", self._openapi_v2)
        cq = PREFIX + "/{version}/clusterqueues/{name}/" + wire.SUBRESOURCE
        lq = PREFIX + "/{version}/namespaces/{namespace}/localqueues/{name}/" + wire.SUBRESOURCE
        app.router.add_get(cq, self._cluster_queue)
        app.router.add_get(lq, self._local_queue)
        app.router.add_route("*", cq, self._not_allowed)
        app.router.add_route("*", lq, self._not_allowed)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        return app

    @web.middleware
    async def _authenticated(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path in HEALTH_PATHS:
            return await handler(request)
        user = authenticate(self.front_proxy, _common_name(request), request.headers)
        if user is None:
            return _failure(wire.unauthorized())
        request[USER] = user
        return await handler(request)

    async def _health(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _group_list(self, _: web.Request) -> web.Response:
        return _json(discovery.api_group_list())

    async def _group(self, _: web.Request) -> web.Response:
        return _json(discovery.api_group())

    async def _resources(self, request: web.Request) -> web.Response:
        version = request.match_info["version"]
        if version not in wire.VERSIONS:
            return _failure(wire.page_not_found())
        return _json(discovery.api_resource_list(version))

    async def _openapi_v2(self, request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == self._openapi_etag:
            return web.Response(status=304, headers={"ETag": self._openapi_etag})
        return web.Response(
            body=self._openapi, content_type=JSON, headers={"ETag": self._openapi_etag}
        )

    async def _not_allowed(self, _: web.Request) -> web.Response:
        return _failure(wire.method_not_allowed())

    async def _unknown(self, _: web.Request) -> web.Response:
        return _failure(wire.page_not_found())

    async def _cluster_queue(self, request: web.Request) -> web.Response:
        question = Question(
            wire.CLUSTER_QUEUES,
            request.match_info["version"],
            request.match_info["name"],
            namespace=None,
        )
        return await self._pending(request, question)

    async def _local_queue(self, request: web.Request) -> web.Response:
        question = Question(
            wire.LOCAL_QUEUES,
            request.match_info["version"],
            request.match_info["name"],
            namespace=request.match_info["namespace"],
        )
        return await self._pending(request, question)

    async def _pending(self, request: web.Request, question: Question) -> web.Response:
        if question.version not in wire.VERSIONS:
            return _failure(wire.page_not_found())
        try:
            page = wire.page_of(request.query)
        except wire.BadRequest as refused:
            return _failure(wire.bad_request(str(refused)))
        user = request[USER]
        try:
            decision = await self.reviewer.decide(user, question)
        except RestError as failure:
            log.warning("access review failed", extra={"error": str(failure)})
            return _failure(wire.internal_error(f"access review failed: {failure}"))
        if not decision.allowed:
            return _failure(
                wire.forbidden(
                    question.resource, question.name, question.namespace, user.name, decision.reason
                )
            )
        if question.namespace is None:
            items = cluster_queue_page(self.source, question.name, page)
        else:
            items = local_queue_page(self.source, question.namespace, question.name, page)
        if items is None:
            return _failure(wire.not_found(question.resource, question.name))
        return _json(wire.summary(question.version, items))


class VisibilityServer:
    """The API on an HTTPS listener, with its certificate and front-proxy settings kept fresh."""

    def __init__(
        self,
        source: PendingSource,
        rest: RestClient,
        settings: VisibilitySettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.rest = rest
        self.api = VisibilityApi(source, AccessReviewer(rest, clock=clock))
        self.tls = ServingTls(settings.cert_dir)
        self._runner: web.AppRunner | None = None
        self.port = settings.port
        self.serving = asyncio.Event()
        """Set while the API listens (``port`` is then the bound port)."""

    async def run(self) -> None:
        """Serve until cancelled: wait for the certificate (it may be issued after the pod
        starts), read the front-proxy settings, listen, then keep both fresh.  Failing to
        listen (the port is taken) raises: the process ends, as Kueue's does."""
        waited = 0.0
        while not self.tls.reloader.check() and not self.tls.loaded:
            if waited % 30 == 0:
                log.info(
                    "visibility API waiting for its certificate",
                    extra={"cert": str(self.tls.reloader.cert_file), "waited_s": waited},
                )
            await asyncio.sleep(1)
            waited += 1
        if self.tls.self_signed:
            log.warning(
                "visibility API served with a self-signed certificate (no --visibility-cert-dir):"
                " only an APIService with insecureSkipTLSVerify can reach it"
            )
        await self.refresh_front_proxy()
        self._runner = web.AppRunner(self.api.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self.settings.host, self.settings.port, ssl_context=self.tls.context
        )
        await site.start()
        for address in self._runner.addresses:  # the bound port, when 0 was asked for
            self.port = int(address[1])
        log.info(
            "visibility API served",
            extra={"address": f"{self.settings.host}:{self.port}", "versions": wire.VERSIONS},
        )
        self.serving.set()
        try:
            await asyncio.gather(
                self._keep_front_proxy(),
                self.tls.reloader.watch(self.settings.cert_check_seconds),
            )
        finally:
            await self._runner.cleanup()
            self._runner = None
            self.serving.clear()

    async def refresh_front_proxy(self) -> None:
        """Read the API server's front-proxy settings; keep the previous ones on failure."""
        namespace, name = AUTHENTICATION_CONFIGMAP
        try:
            configmap = await self.rest.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        except RestError as failure:
            log.warning(
                "cannot read the API server's front-proxy settings; requests stay unauthenticated"
                " until they are read",
                extra={"configmap": f"{namespace}/{name}", "error": str(failure)},
            )
            return
        settings = front_proxy(configmap.get("data") or {})
        if not settings.client_ca:
            log.warning(
                "the API server has no front-proxy (requestheader) client CA: the visibility API"
                " cannot authenticate the requests it proxies (kube-apiserver"
                " --requestheader-client-ca-file)",
                extra={"configmap": f"{namespace}/{name}"},
            )
        if self.tls.set_client_ca(settings.client_ca):
            log.info("front-proxy client CA loaded", extra={"configmap": f"{namespace}/{name}"})
        self.api.front_proxy = settings

    async def _keep_front_proxy(self) -> None:
        while True:
            await asyncio.sleep(self.settings.front_proxy_refresh_seconds)
            await self.refresh_front_proxy()


__all__ = ["VisibilityApi", "VisibilityServer", "VisibilitySettings"]
