"""The aiohttp application factory: :func:`create_app` (no module-level app).

Application state lives under typed :class:`aiohttp.web.AppKey`\\ s.  The
cluster lookup — a kubernetes_asyncio client when the process runs against
a cluster — is opened and closed by a cleanup context, so a test's app and
the real process start and stop it the same way.  Readiness is a callable
the server gives (true once a serving certificate is loaded); tests without
TLS pass one that is always true.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from aiohttp import web

from webhook.lookup import ClusterLookup, StaticLookup
from webhook.metrics import WebhookMetrics
from webhook.routes import (
    CONVERT,
    DecisionContext,
    admission_endpoints,
    admission_handler,
    conversion_handler,
    probe_handlers,
)
from webhook.settings import WebhookSettings

SETTINGS = web.AppKey("settings", WebhookSettings)
METRICS = web.AppKey("metrics", WebhookMetrics)
LOOKUP = web.AppKey("lookup", ClusterLookup)


class _LookupProxy:
    """Forwards to the lookup the cleanup context opens (the routes are built before it exists)."""

    def __init__(self) -> None:
        self.target: ClusterLookup = StaticLookup()

    async def has_default_local_queue(self, namespace: str) -> bool:
        return await self.target.has_default_local_queue(namespace)

    async def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        return await self.target.namespace_labels(namespace)

    async def get_object(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Mapping[str, Any] | None:
        return await self.target.get_object(api_version, kind, namespace, name)


def create_app(
    settings: WebhookSettings,
    *,
    lookup: ClusterLookup | None = None,
    is_ready: Callable[[], bool] = lambda: True,
) -> web.Application:
    """A webhook application; ``lookup`` None means "open the Kubernetes client from settings"."""
    app = web.Application(client_max_size=settings.max_body_bytes)
    metrics = WebhookMetrics.create()
    proxy = _LookupProxy()
    if lookup is not None:
        proxy.target = lookup
    app[SETTINGS] = settings
    app[METRICS] = metrics
    app[LOOKUP] = proxy
    context = DecisionContext(settings=settings, lookup=proxy)
    for path, decide in admission_endpoints().items():
        app.router.add_post(path, admission_handler(path, decide, context=context, metrics=metrics))
    app.router.add_post(CONVERT, conversion_handler(context=context, metrics=metrics))
    app.router.add_routes(probe_handlers(is_ready))
    if lookup is None and settings.cluster_lookups:
        app.cleanup_ctx.append(_kubernetes_lookup(proxy))
    return app


def probe_app(is_ready: Callable[[], bool]) -> web.Application:
    """The plain-HTTP probe listener (``--probe-port``): health and readiness only.

    ``/metrics`` is served apart, to callers the cluster allows
    (:mod:`webhook.secure_metrics`)."""
    app = web.Application()
    app.router.add_routes(probe_handlers(is_ready))
    return app


def _kubernetes_lookup(proxy: _LookupProxy) -> Callable[[web.Application], AsyncIterator[None]]:
    async def open_and_close(app: web.Application) -> AsyncIterator[None]:
        from webhook.kube_lookup import (
            KubernetesLookup,
        )  # the one module that imports kubernetes_asyncio

        async with KubernetesLookup.connect(app[SETTINGS]) as kubernetes:
            proxy.target = kubernetes
            yield
            proxy.target = StaticLookup()

    return open_and_close
