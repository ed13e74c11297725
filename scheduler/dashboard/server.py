"""The dashboard's web application: its page, its JSON views and its live updates.

One :class:`Dashboard` holds the mirror of the cluster, the latest
:class:`~scheduler.dashboard.analysis.Analysis` (made again when the
picture changed, at most every :data:`ANALYSIS_SECONDS`) and the usage
history; :func:`create_app` serves, read-only:

- ``/``: the page (``static/index.html``, ``app.js``, ``app.css``: plain
  HTML, script and style shipped with kuota, no build step);
- ``/api/...``: one JSON document per view (:mod:`scheduler.dashboard.views`),
  each authorized as :mod:`scheduler.dashboard.access` says;
- ``/api/stream``: server-sent events; ``changed`` with the picture's
  version whenever it changes (at most once a second), a comment every 15 s
  to keep the connection open.  The page fetches the view it shows again on
  each ``changed``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from aiohttp import web

from scheduler.api import objects as raw
from scheduler.dashboard import access, views
from scheduler.dashboard.access import kueue
from scheduler.dashboard.analysis import Analysis
from scheduler.dashboard.history import History
from scheduler.kube.access_review import Attributes
from scheduler.kube.secure_serving import USER, Reviewer

ANALYSIS_SECONDS = 1.0
"""Least time between two analyses (a burst of changes is read as one)."""
KEEPALIVE_SECONDS = 15.0
STATIC = {"index.html": "text/html", "app.js": "text/javascript", "app.css": "text/css"}

Events = Callable[[str, str], Awaitable[list[dict[str, Any]]]]
"""Reads the Events of one Workload (namespace, name)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class Dashboard:
    """The mirror, the analysis of its latest picture, and the history (module docstring)."""

    def __init__(
        self,
        snapshot: Callable[[], Any],
        version: Callable[[], int],
        *,
        nodes: Callable[[], list[dict[str, Any]]] = list,
        history_size: int = 360,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.snapshot = snapshot
        self.version = version
        self.nodes = nodes
        self.clock = clock
        self.monotonic = monotonic
        self.history = History(history_size)
        self._analysis: Analysis | None = None
        self._analysed_version = -1
        self._analysed_at = float("-inf")
        self._listeners: set[asyncio.Event] = set()

    def analysis(self) -> Analysis:
        """The analysis of the current picture (at most :data:`ANALYSIS_SECONDS` old)."""
        version = self.version()
        stale = version != self._analysed_version
        if self._analysis is None or (
            stale and self.monotonic() - self._analysed_at >= ANALYSIS_SECONDS
        ):
            self._analysis = Analysis.of(self.snapshot(), self.clock())
            self._analysed_version, self._analysed_at = version, self.monotonic()
        return self._analysis

    def changed(self) -> None:
        """The picture changed: wake every stream."""
        for listener in self._listeners:
            listener.set()

    async def sample_forever(self, interval: float) -> None:
        """Add a history sample every ``interval`` seconds, until cancelled."""
        while True:
            self.history.add(self.analysis(), self.clock())
            await asyncio.sleep(interval)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"}
        )
        await response.prepare(request)
        wake = asyncio.Event()
        self._listeners.add(wake)
        try:
            await self._send_changes(response, wake)
        except ConnectionResetError:
            pass  # the viewer left
        finally:
            self._listeners.discard(wake)
        return response

    async def _send_changes(self, response: web.StreamResponse, wake: asyncio.Event) -> None:
        """``changed`` when the version moved, a keepalive comment otherwise, until cancelled."""
        sent = -1
        while True:
            version = self.version()
            if version != sent:
                await response.write(f"event: changed\ndata: {version}\n\n".encode())
                sent = version
            try:
                await asyncio.wait_for(wake.wait(), timeout=KEEPALIVE_SECONDS)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
            wake.clear()
            await asyncio.sleep(ANALYSIS_SECONDS)  # a burst of changes is one update


def _static(name: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def serve(_: web.Request) -> web.Response:
        body = resources.files("scheduler.dashboard").joinpath("static", name).read_bytes()
        return web.Response(
            body=body, content_type=STATIC[name], headers={"Cache-Control": "no-cache"}
        )

    return serve


def create_app(dashboard: Dashboard, reviewer: Reviewer, events: Events) -> web.Application:
    """The dashboard's application (module docstring)."""

    async def require(request: web.Request, attributes: Attributes) -> None:
        await access.require(request, reviewer, attributes)

    async def whoami(request: web.Request) -> web.Response:
        user = request[USER]
        return web.json_response({"user": user.name, "groups": list(user.groups)})

    async def overview(request: web.Request) -> web.Response:
        analysis = dashboard.analysis()
        allowed = await access.namespaces(request, reviewer, "workloads", _namespaces(analysis))
        body = views.overview(analysis.objects, analysis, allowed)
        return web.json_response({**body, "version": dashboard.version()})

    async def cluster_queues(request: web.Request) -> web.Response:
        await require(request, kueue("list", "clusterqueues"))
        analysis = dashboard.analysis()
        return web.json_response(views.cluster_queues(analysis.objects, analysis))

    async def cohorts(request: web.Request) -> web.Response:
        await require(request, kueue("list", "clusterqueues"))
        return web.json_response(views.cohorts(dashboard.analysis()))

    async def local_queues(request: web.Request) -> web.Response:
        analysis = dashboard.analysis()
        candidates = {raw.namespace(lq) or "" for lq in analysis.objects.local_queues}
        allowed = await access.namespaces(request, reviewer, "localqueues", candidates)
        return web.json_response(views.local_queues(analysis.objects, analysis, allowed))

    async def workloads(request: web.Request) -> web.Response:
        analysis = dashboard.analysis()
        wanted = request.query.get("namespace") or None
        candidates = {wanted} if wanted else _namespaces(analysis)
        allowed = await access.namespaces(request, reviewer, "workloads", candidates)
        shown = candidates if allowed is None and wanted else allowed
        return web.json_response(views.workloads(analysis.objects, analysis, shown))

    async def workload(request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        await require(request, kueue("get", "workloads", namespace, name))
        analysis = dashboard.analysis()
        found = views.workload_detail(analysis.objects, analysis, namespace, name, analysis.now)
        if found is None:
            raise web.HTTPNotFound(text=f"Workload {namespace}/{name} not found")
        user = request[USER]
        may_list_events = await reviewer.authorize(
            user, Attributes(verb="list", resource="events", namespace=namespace)
        )
        found["events"] = await events(namespace, name) if may_list_events else None
        return web.json_response(found)

    async def flavors(request: web.Request) -> web.Response:
        await require(request, kueue("list", "resourceflavors"))
        may_list_nodes = await reviewer.authorize(
            request[USER], Attributes(verb="list", resource="nodes")
        )
        nodes = dashboard.nodes() if may_list_nodes else None
        return web.json_response(views.resource_flavors(dashboard.analysis().objects, nodes))

    async def history(request: web.Request) -> web.Response:
        await require(request, kueue("list", "clusterqueues"))
        return web.json_response({"samples": dashboard.history.view()})

    app = web.Application(middlewares=[access.authenticate(reviewer)])
    app.router.add_get("/", _static("index.html"))
    for name in STATIC:
        app.router.add_get(f"/static/{name}", _static(name))
    app.router.add_get("/api/whoami", whoami)
    app.router.add_get("/api/overview", overview)
    app.router.add_get("/api/clusterqueues", cluster_queues)
    app.router.add_get("/api/cohorts", cohorts)
    app.router.add_get("/api/localqueues", local_queues)
    app.router.add_get("/api/workloads", workloads)
    app.router.add_get("/api/workloads/{namespace}/{name}", workload)
    app.router.add_get("/api/resourceflavors", flavors)
    app.router.add_get("/api/history", history)
    app.router.add_get("/api/stream", dashboard.stream)
    return app


def _namespaces(analysis: Analysis) -> set[str]:
    return {raw.namespace(workload) or "" for workload in analysis.objects.workloads}


__all__ = ["ANALYSIS_SECONDS", "Dashboard", "create_app"]
