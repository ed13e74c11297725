"""The visibility server over real TLS: the aggregator's certificate, its headers, RBAC.

The API server is played by a small fake (the front-proxy ConfigMap and the
SubjectAccessReview answers); the TLS handshakes, the client certificates and
the HTTP routes are the real ones, on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from certs.generate import KeyPair, issue, new_ca
from scheduler.visibility.server import VisibilityServer, VisibilitySettings
from tests.visibility.cluster import three_priorities

PROXY_NAME = "front-proxy-client"


class FakeApiServer:
    """The two things the visibility server asks the API server."""

    def __init__(self, front_proxy_ca: KeyPair) -> None:
        self.ca_pem = front_proxy_ca.cert_pem.decode()
        self.allowed: set[tuple[str, str, str | None]] = set()

    async def get(self, path: str, **_: Any) -> dict[str, Any]:
        assert (
            path == "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
        )
        return {
            "data": {
                "requestheader-client-ca-file": self.ca_pem,
                "requestheader-allowed-names": json.dumps([PROXY_NAME]),
                "requestheader-username-headers": json.dumps(["X-Remote-User"]),
                "requestheader-group-headers": json.dumps(["X-Remote-Group"]),
                "requestheader-extra-headers-prefix": json.dumps(["X-Remote-Extra-"]),
            }
        }

    async def create(self, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        spec = body["spec"]
        attributes = spec["resourceAttributes"]
        key = (spec["user"], attributes["resource"], attributes.get("namespace"))
        return {"status": {"allowed": key in self.allowed}}


@dataclass
class Setup:
    server: VisibilityServer
    api: FakeApiServer
    serving_ca: KeyPair
    proxy_ca: KeyPair
    tmp: Path

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.server.port}"

    def client_ssl(self, client: KeyPair | None, name: str = "client") -> ssl.SSLContext:
        context = ssl.create_default_context(cadata=self.serving_ca.cert_pem.decode())
        context.check_hostname = False
        if client is not None:
            cert, key = self.tmp / f"{name}.crt", self.tmp / f"{name}.key"
            client.write(cert, key)
            context.load_cert_chain(cert, key)
        return context

    async def get(
        self,
        path: str,
        *,
        client: KeyPair | None = None,
        user: str | None = "alice",
        headers: dict[str, str] | None = None,
        method: str = "GET",
    ) -> tuple[int, Any, CIMultiDict[str]]:
        sent = {"X-Remote-User": user, "X-Remote-Group": "team"} if user else {}
        sent.update(headers or {})
        context = self.client_ssl(client)
        async with (
            aiohttp.ClientSession() as session,
            session.request(method, self.base + path, ssl=context, headers=sent) as reply,
        ):
            body = await reply.read()
            payload = json.loads(body) if reply.content_type == "application/json" else body
            return reply.status, payload, CIMultiDict(reply.headers)


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    serving_ca = new_ca("serving")
    issue(serving_ca, common_name="visibility", ip_addresses=["127.0.0.1"], server=True).write(
        tmp_path / "tls.crt", tmp_path / "tls.key"
    )
    proxy_ca = new_ca("front-proxy-ca")
    api = FakeApiServer(proxy_ca)
    cluster = three_priorities()
    server = VisibilityServer(
        cluster.source,
        api,  # type: ignore[arg-type]
        VisibilitySettings(host="127.0.0.1", port=0, cert_dir=tmp_path),
    )
    running = asyncio.create_task(server.run())
    await asyncio.wait_for(server.serving.wait(), timeout=30)
    yield Setup(server, api, serving_ca, proxy_ca, tmp_path)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)


def proxy(setup: Setup, name: str = PROXY_NAME) -> KeyPair:
    return issue(setup.proxy_ca, common_name=name, client=True)


CQ_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads"
LQ_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/ns-b/localqueues/b/pendingworkloads"


async def test_the_aggregators_caller_sees_what_rbac_grants(setup: Setup) -> None:
    setup.api.allowed.add(("alice", "localqueues", "ns-b"))
    status, summary, _ = await setup.get(LQ_PATH + "?limit=1&offset=1", client=proxy(setup))
    assert status == 200, summary
    assert summary["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta1"
    assert [
        (i["metadata"]["name"], i["positionInClusterQueue"], i["positionInLocalQueue"])
        for i in summary["items"]
    ] == [("lq-b-low", 2, 1)]
    status, refused, _ = await setup.get(CQ_PATH, client=proxy(setup))
    assert status == 403
    assert refused["message"] == (
        'clusterqueues.visibility.kueue.x-k8s.io "cq" is forbidden: User "alice" cannot get'
        ' resource "clusterqueues/pendingworkloads" in API group "visibility.kueue.x-k8s.io" at'
        " the cluster scope"
    )
    setup.api.allowed.add(("alice", "clusterqueues", None))
    status, summary, _ = await setup.get(CQ_PATH, client=proxy(setup))
    assert (status, len(summary["items"])) == (200, 3)


async def test_headers_count_only_on_the_proxys_certificate(setup: Setup) -> None:
    setup.api.allowed.add(("alice", "clusterqueues", None))
    assert (await setup.get(CQ_PATH))[0] == 401  # no certificate: headers mean nothing
    assert (await setup.get(CQ_PATH, client=proxy(setup, "intruder")))[0] == 401
    assert (await setup.get(CQ_PATH, client=proxy(setup), user=None))[0] == 401
    stranger = issue(new_ca("elsewhere"), common_name=PROXY_NAME, client=True)
    with pytest.raises(aiohttp.ClientError):
        await setup.get(CQ_PATH, client=stranger)
    assert (await setup.get("/healthz"))[:2] == (200, b"ok")


async def test_a_new_front_proxy_ca_replaces_the_old_one(setup: Setup) -> None:
    setup.api.allowed.add(("alice", "clusterqueues", None))
    old = proxy(setup)
    setup.proxy_ca = new_ca("rotated")
    setup.api.ca_pem = setup.proxy_ca.cert_pem.decode()
    await setup.server.refresh_front_proxy()
    assert (await setup.get(CQ_PATH, client=proxy(setup)))[0] == 200
    with pytest.raises(aiohttp.ClientError):
        await setup.get(CQ_PATH, client=old)


async def test_queries_methods_and_paths_the_api_does_not_have(setup: Setup) -> None:
    setup.api.allowed.add(("alice", "clusterqueues", None))
    client = proxy(setup)
    status, bad, _ = await setup.get(CQ_PATH + "?limit=many", client=client)
    assert (status, bad["reason"]) == (400, "BadRequest")
    status, _, _ = await setup.get(CQ_PATH.replace("v1beta2", "v1"), client=client)
    assert status == 404
    status, refused, _ = await setup.get(CQ_PATH, client=client, method="POST")
    assert (status, refused["reason"]) == (405, "MethodNotAllowed")
    status, missing, _ = await setup.get("/apis/other.group/v1", client=client)
    assert (status, missing["reason"]) == (404, "NotFound")


async def test_discovery_and_openapi_for_any_authenticated_caller(setup: Setup) -> None:
    client = proxy(setup)
    status, groups, _ = await setup.get("/apis", client=client)
    assert (status, groups["kind"]) == (200, "APIGroupList")
    status, resources, _ = await setup.get("/apis/visibility.kueue.x-k8s.io/v1beta2", client=client)
    assert (status, resources["kind"]) == (200, "APIResourceList")
    status, document, headers = await setup.get("/openapi/v2", client=client)
    assert status == 200 and document["swagger"] == "2.0"
    status, _, _ = await setup.get(
        "/openapi/v2", client=client, headers={"If-None-Match": headers["ETag"]}
    )
    assert status == 304


async def test_an_unknown_cluster_queue_is_not_found_once_allowed(setup: Setup) -> None:
    setup.api.allowed.add(("alice", "clusterqueues", None))
    status, missing, _ = await setup.get(
        CQ_PATH.replace("/cq/", "/non-existent/"), client=proxy(setup)
    )
    assert (status, missing["message"]) == (
        404,
        'clusterqueue.visibility.kueue.x-k8s.io "non-existent" not found',
    )


async def test_the_api_waits_for_a_certificate_issued_after_start(tmp_path: Path) -> None:
    """The Secret may be mounted after the pod starts: the API listens once it appears."""
    proxy_ca = new_ca("front-proxy-ca")
    server = VisibilityServer(
        three_priorities().source,
        FakeApiServer(proxy_ca),  # type: ignore[arg-type]
        VisibilitySettings(host="127.0.0.1", port=0, cert_dir=tmp_path),
    )
    running = asyncio.create_task(server.run())
    await asyncio.sleep(1.5)
    assert not server.serving.is_set() and not running.done()
    serving_ca = new_ca("serving")
    issue(serving_ca, common_name="v", ip_addresses=["127.0.0.1"], server=True).write(
        tmp_path / "tls.crt", tmp_path / "tls.key"
    )
    await asyncio.wait_for(server.serving.wait(), timeout=10)
    setup = Setup(server, FakeApiServer(proxy_ca), serving_ca, proxy_ca, tmp_path)
    assert (await setup.get("/healthz"))[0] == 200
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    assert not server.serving.is_set()
