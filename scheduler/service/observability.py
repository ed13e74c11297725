"""The scheduler's health and metrics endpoints.

``/healthz`` says the process is alive (its loop has not stopped), ``/readyz``
that every informer has listed once, ``/metrics`` serves prometheus-client's
default registry (the metrics themselves are defined in
:mod:`scheduler.kube.metrics`, where they are recorded).  Logs are
:mod:`scheduler.logs`' JSON lines, shared with the webhook.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

# The scheduler's metrics register themselves on import; /metrics serves them
# (from prometheus-client's default registry) even before the loop records any.
from scheduler.kube import metrics as metrics


def health_app(
    *,
    ready: Callable[[], bool],
    alive: Callable[[], bool],
    probes: tuple[str, str] | None = ("/readyz", "/healthz"),
    metrics: bool = True,
) -> web.Application:
    """The probes (``probes``: the readiness and liveness paths; None: none) and ``/metrics``.

    ``/healthz`` says the loop is alive, ``/readyz`` that every informer has
    listed; the Configuration's ``health`` section may name them otherwise.
    """

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok") if alive() else web.Response(status=500, text="loop stopped")

    async def readyz(_: web.Request) -> web.Response:
        return (
            web.Response(text="ok")
            if ready()
            else web.Response(status=503, text="informers not synced")
        )

    async def serve_metrics(_: web.Request) -> web.Response:
        return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    if probes is not None:
        readiness, liveness = probes
        app.router.add_get(liveness, healthz)
        app.router.add_get(readiness, readyz)
    if metrics:
        app.router.add_get("/metrics", serve_metrics)
    return app
