"""The webhook's lookups through the REST layer: absent is an answer, failure is LookupFailed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from kubernetes_asyncio import client

from scheduler.kube.rest import Rest
from webhook.kube_lookup import KubernetesLookup
from webhook.lookup import LookupFailed


@pytest.fixture
async def lookup() -> AsyncIterator[KubernetesLookup]:
    async def namespace(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name == "slow":
            await asyncio.sleep(2)
        if name == "broken":
            return web.json_response({"kind": "Status", "message": "etcd"}, status=500)
        if name != "team":
            return web.json_response({"kind": "Status", "message": "not found"}, status=404)
        return web.json_response({"metadata": {"name": "team", "labels": {"a": "b", "n": 1}}})

    async def local_queue(request: web.Request) -> web.Response:
        if request.match_info["namespace"] == "team":
            return web.json_response({"metadata": {"name": "default"}})
        return web.json_response({"kind": "Status", "message": "not found"}, status=404)

    async def jobset(request: web.Request) -> web.Response:
        return web.json_response({"metadata": {"name": request.match_info["name"], "uid": "u"}})

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{name}", namespace)
    app.router.add_get(
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/{namespace}/localqueues/default", local_queue
    )
    app.router.add_get("/apis/jobset.x-k8s.io/v1alpha2/namespaces/team/jobsets/{name}", jobset)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    configuration = client.Configuration(host=str(server.make_url("")).rstrip("/"))
    async with client.ApiClient(configuration=configuration) as api:
        yield KubernetesLookup(Rest(api), timeout=0.5)
    await server.close()


async def test_answers(lookup: KubernetesLookup) -> None:
    assert await lookup.namespace_labels("team") == {"a": "b"}
    assert await lookup.namespace_labels("nobody") is None, "404 is an answer"
    assert await lookup.has_default_local_queue("team") is True
    assert await lookup.has_default_local_queue("other") is False
    owner = await lookup.get_object("jobset.x-k8s.io/v1alpha2", "JobSet", "team", "js")
    assert owner == {"metadata": {"name": "js", "uid": "u"}}


async def test_failures(lookup: KubernetesLookup) -> None:
    with pytest.raises(LookupFailed, match="HTTP 500"):
        await lookup.namespace_labels("broken")
    with pytest.raises(LookupFailed, match="no answer within"):
        await lookup.namespace_labels("slow")
