"""The scheduler's health and metrics endpoints.

``/healthz`` says the process is alive (its loop has not stopped), ``/readyz``
that every informer has listed once (the Configuration's ``health`` section
may name them otherwise); both are plain HTTP on
``--health-probe-bind-address``, for the kubelet.  ``/metrics`` is served on
``--metrics-bind-address``, over HTTPS to callers the cluster allows
(:mod:`scheduler.kube.secure_serving`): prometheus-client's default
registry, which holds kuota's own metrics (:mod:`scheduler.kube.metrics`)
and Kueue's series (:mod:`scheduler.kube.kueue_metrics`).  Logs are
:mod:`scheduler.logs`' JSON lines, shared with the webhook.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from prometheus_client import REGISTRY, generate_latest

# Registered on import: /metrics serves them even before the loop records any.
from scheduler.kube import kueue_metrics as kueue_metrics
from scheduler.kube import metrics as metrics
from scheduler.kube.secure_serving import Reviewer, metrics_app

PROBES = ("/readyz", "/healthz")
"""The readiness and liveness paths unless the Configuration names them."""


def add_probes(
    app: web.Application,
    *,
    ready: Callable[[], bool],
    alive: Callable[[], bool],
    probes: tuple[str, str] = PROBES,
) -> web.Application:
    """``app`` with the probes (``probes``: the readiness and liveness paths) added."""

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok") if alive() else web.Response(status=500, text="loop stopped")

    async def readyz(_: web.Request) -> web.Response:
        return (
            web.Response(text="ok")
            if ready()
            else web.Response(status=503, text="informers not synced")
        )

    readiness, liveness = probes
    app.router.add_get(liveness, healthz)
    app.router.add_get(readiness, readyz)
    return app


def health_app(
    *, ready: Callable[[], bool], alive: Callable[[], bool], probes: tuple[str, str] = PROBES
) -> web.Application:
    """The probes alone."""
    return add_probes(web.Application(), ready=ready, alive=alive, probes=probes)


def scheduler_metrics_app(reviewer: Reviewer | None) -> web.Application:
    """``/metrics`` of the scheduler (behind ``reviewer``'s checks unless None)."""
    return metrics_app(lambda: generate_latest(REGISTRY), reviewer)
