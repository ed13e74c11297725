"""The dashboard's HTTP side: who sees what, the page, and the stream of changes."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from scheduler.dashboard.server import Dashboard, create_app
from scheduler.kube.access_review import Attributes, User
from tests.cli.live_builders import T0, research_pool

NOW = T0 + timedelta(minutes=5)
ADMIN = User("admin")
TEAM = User("team-member")


class Reviewer:
    """admin may do anything; team-member may list workloads and localqueues in ``team``."""

    async def authenticate(self, token: str) -> User | None:
        return {"admin-token": ADMIN, "team-token": TEAM}.get(token)

    async def authorize(self, user: User, attributes: Attributes) -> bool:
        if user == ADMIN:
            return True
        return (
            attributes.verb in ("list", "get")
            and attributes.resource in ("workloads", "localqueues")
            and attributes.namespace == "team"
        )


def picture() -> Any:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", admitted=("research-pool", "ondemand"))
    cluster.local_queue("other", "user-queue", "research-pool")
    cluster.job("other", "b", "user-queue")
    return cluster.objects


def client(version: list[int] | None = None) -> tuple[TestClient, Dashboard]:
    counter = version if version is not None else [1]
    objects = picture()
    dashboard = Dashboard(lambda: objects, lambda: counter[0], clock=lambda: NOW)

    async def events(namespace: str, name: str) -> list[dict[str, Any]]:
        return [{"type": "Normal", "reason": "QuotaReserved", "message": name}]

    app = create_app(dashboard, Reviewer(), events)
    return TestClient(TestServer(app, host="127.0.0.1")), dashboard


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_page_needs_no_token_and_the_data_does() -> None:
    http, _ = client()
    async with http:
        page = await http.get("/")
        assert page.status == 200 and "<title>kuota</title>" in await page.text()
        assert (await http.get("/static/app.js")).status == 200
        assert (await http.get("/api/overview")).status == 401
        assert (await http.get("/api/overview", headers=auth("forged"))).status == 401
        me = await (await http.get("/api/whoami", headers=auth("team-token"))).json()
        assert me["user"] == "team-member"


async def test_each_view_shows_what_the_viewer_may_read() -> None:
    http, _ = client()
    async with http:
        admin = await (await http.get("/api/workloads", headers=auth("admin-token"))).json()
        assert {row["namespace"] for row in admin} == {"team", "other"}
        team = await (await http.get("/api/workloads", headers=auth("team-token"))).json()
        assert {row["namespace"] for row in team} == {"team"}
        other = await http.get("/api/workloads?namespace=other", headers=auth("team-token"))
        assert await other.json() == []
        queues = await (await http.get("/api/localqueues", headers=auth("team-token"))).json()
        assert [q["namespace"] for q in queues] == ["team"]
        denied = await http.get("/api/clusterqueues", headers=auth("team-token"))
        assert denied.status == 403
        assert "may not list clusterqueues.kueue.x-k8s.io" in (await denied.json())["error"]
        assert (await http.get("/api/clusterqueues", headers=auth("admin-token"))).status == 200
        assert (await http.get("/api/cohorts", headers=auth("team-token"))).status == 403
        assert (await http.get("/api/history", headers=auth("admin-token"))).status == 200


async def test_one_workload_with_its_explanation_and_events() -> None:
    http, dashboard = client()
    async with http:
        name = next(
            w["metadata"]["name"]
            for w in dashboard.snapshot().workloads
            if w["metadata"]["namespace"] == "other"
        )
        denied = await http.get(f"/api/workloads/other/{name}", headers=auth("team-token"))
        assert denied.status == 403
        reply = await http.get(f"/api/workloads/other/{name}", headers=auth("admin-token"))
        body = await reply.json()
        assert body["explanation"][1].startswith("It is pending in LocalQueue user-queue")
        assert body["reason"] == "FitsNow" and body["events"][0]["message"] == name
        missing = await http.get("/api/workloads/other/absent", headers=auth("admin-token"))
        assert missing.status == 404


async def test_the_stream_says_when_the_picture_changed() -> None:
    version = [1]
    http, dashboard = client(version)
    async with http:
        reply = await http.get("/api/stream", headers=auth("team-token"))
        assert reply.headers["Content-Type"] == "text/event-stream"
        first = await asyncio.wait_for(reply.content.readuntil(b"\n\n"), 5)
        assert first == b"event: changed\ndata: 1\n\n"
        version[0] = 2
        dashboard.changed()
        second = await asyncio.wait_for(reply.content.readuntil(b"\n\n"), 5)
        assert second == b"event: changed\ndata: 2\n\n"
        reply.close()
        assert (await http.get("/api/stream")).status == 401


def test_the_analysis_is_made_again_only_for_a_new_picture_and_not_too_often() -> None:
    version, clock = [1], [0.0]
    objects = picture()
    dashboard = Dashboard(
        lambda: objects, lambda: version[0], clock=lambda: NOW, monotonic=lambda: clock[0]
    )
    first = dashboard.analysis()
    assert dashboard.analysis() is first
    version[0] = 2
    assert dashboard.analysis() is first, "within a second of the last one"
    clock[0] = 1.5
    assert dashboard.analysis() is not first
