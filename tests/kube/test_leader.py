"""Leadership: who acts, what ends a term, and that a replica then campaigns again.

``LeaseElection`` runs kubernetes_asyncio's election against a small Lease
endpoint served on 127.0.0.1 (GET, create, replace of one Lease), so the real
client code paths run; the timings are the library's minimums (a few seconds).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from kubernetes_asyncio import client

from scheduler.kube.leader import AlwaysLeader, LeaseElection
from scheduler.kube.rest import Rest
from tests.clock import LoopTime

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kuota/leases"


class LeaseServer:
    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.refuse_writes = False
        self.version = 0
        self.holders: list[str] = []

    def app(self) -> web.Application:
        async def get(_: web.Request) -> web.Response:
            if self.lease is None:
                missing = {"kind": "Status", "code": 404, "reason": "NotFound", "message": "no"}
                return web.json_response(missing, status=404)
            return web.json_response(self.lease)

        async def write(request: web.Request) -> web.Response:
            if self.refuse_writes:
                failure = {"kind": "Status", "code": 500, "message": "etcd is away"}
                return web.json_response(failure, status=500)
            body = json.loads(await request.text())
            current = (self.lease or {}).get("metadata", {}).get("resourceVersion")
            if request.method == "PUT" and body["metadata"].get("resourceVersion") != current:
                conflict = {"kind": "Status", "code": 409, "message": "modified"}
                return web.json_response(conflict, status=409)
            self.holders.append(body["spec"]["holderIdentity"])
            self.version += 1
            body.setdefault("metadata", {})["resourceVersion"] = str(self.version)
            body["metadata"]["namespace"] = "kuota"
            self.lease = body
            return web.json_response(body, status=201 if request.method == "POST" else 200)

        app = web.Application()
        app.router.add_get(f"{LEASES}/scheduler", get)
        app.router.add_post(LEASES, write)
        app.router.add_put(f"{LEASES}/scheduler", write)
        return app


@pytest.fixture
async def lease_api() -> AsyncIterator[tuple[LeaseServer, client.ApiClient]]:
    leases = LeaseServer()
    server = TestServer(leases.app(), host="127.0.0.1")
    await server.start_server()
    configuration = client.Configuration(host=str(server.make_url("")).rstrip("/"))
    async with client.ApiClient(configuration=configuration) as api:
        yield leases, api
    await server.close()


def election(api: client.ApiClient) -> LeaseElection:
    return LeaseElection(
        Rest(api),
        name="scheduler",
        namespace="kuota",
        identity="replica-1",
        lease_duration=3,
        renew_deadline=2,
        retry_period=1,
    )


async def test_a_lone_replica_leads_until_its_work_ends() -> None:
    leader = AlwaysLeader("solo")
    seen: list[bool] = []
    stopped: list[str] = []

    async def work() -> None:
        seen.append(leader.is_leader())

    async def on_stopped() -> None:
        stopped.append("stopped")

    assert not leader.is_leader()
    await leader.run(work, on_stopped)
    assert seen == [True]
    assert not leader.is_leader()
    assert stopped == [], "work that returns is not a failure"


async def test_work_that_fails_ends_the_term_once() -> None:
    leader = AlwaysLeader("solo")
    stopped: list[str] = []

    async def work() -> None:
        raise RuntimeError("the loop broke")

    async def on_stopped() -> None:
        stopped.append("stopped")

    await leader.run(work, on_stopped)
    assert stopped == ["stopped"]
    assert not leader.is_leader()


async def test_a_failed_loop_releases_the_lease_steps_down_and_campaigns_again(
    lease_api: tuple[LeaseServer, client.ApiClient],
) -> None:
    leases, api = lease_api
    leader = election(api)
    terms: list[bool] = []
    stops: list[str] = []
    second_term = asyncio.Event()

    async def work() -> None:
        terms.append(leader.is_leader() and leader.may_write())
        if len(terms) == 1:
            raise RuntimeError("the loop broke")
        second_term.set()
        await asyncio.sleep(3600)

    async def on_stopped() -> None:
        stops.append("stopped")
        assert not leader.may_write()

    campaign = asyncio.create_task(leader.run(work, on_stopped))
    try:
        await asyncio.wait_for(second_term.wait(), timeout=15)
        assert terms == [True, True]
        assert stops == ["stopped"]
        assert ("replica-1", "") in zip(leases.holders, leases.holders[1:], strict=False), (
            f"the Lease was released after the failed term: {leases.holders}"
        )
        assert leader.is_leader()
    finally:
        campaign.cancel()
        await asyncio.gather(campaign, return_exceptions=True)
    assert leases.lease is not None
    assert leases.lease["spec"]["holderIdentity"] == "", "a graceful stop releases the Lease"
    assert leases.lease["spec"]["leaseDurationSeconds"] == 1


async def test_a_lease_that_cannot_be_renewed_stops_the_work_and_the_replica_campaigns_again(
    lease_api: tuple[LeaseServer, client.ApiClient],
) -> None:
    leases, api = lease_api
    leader = election(api)
    leading = asyncio.Event()
    cancelled = asyncio.Event()
    stopped = asyncio.Event()
    terms: list[int] = []

    async def work() -> None:
        terms.append(len(terms) + 1)
        leading.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def on_stopped() -> None:
        stopped.set()

    campaign = asyncio.create_task(leader.run(work, on_stopped))
    try:
        await asyncio.wait_for(leading.wait(), timeout=10)
        assert leader.is_leader() and leader.may_write()
        leases.refuse_writes = True
        await asyncio.wait_for(stopped.wait(), timeout=15)
        assert cancelled.is_set(), "the leader's work is cancelled when the Lease is lost"
        assert not leader.is_leader() and not leader.may_write()
        assert not campaign.done(), "losing the Lease does not end the process"
        leading.clear()
        leases.refuse_writes = False
        await asyncio.wait_for(leading.wait(), timeout=15)
        assert terms == [1, 2] and leader.is_leader()
    finally:
        campaign.cancel()
        await asyncio.gather(campaign, return_exceptions=True)


async def test_an_api_server_that_does_not_answer_is_campaigned_against_not_a_crash(
    loop_time: LoopTime,
) -> None:
    configuration = client.Configuration(host="http://127.0.0.1:9")  # nothing listens there
    async with client.ApiClient(configuration=configuration) as api:
        leader = election(api)

        async def work() -> None:
            raise AssertionError("never leads")

        async def on_stopped() -> None:
            raise AssertionError("never stops")

        campaign = asyncio.create_task(leader.run(work, on_stopped))
        await asyncio.sleep(2.5)
        assert not campaign.done()
        campaign.cancel()
        await asyncio.gather(campaign, return_exceptions=True)
