"""The REST layer over a real kubernetes_asyncio ApiClient, against a local HTTP server.

The server (aiohttp, on 127.0.0.1) plays the API server: it records what
arrives (method, path, query, content type, body) and answers with what the
test scripts, so these tests check the bytes on the wire and the mapping of
every answer to the exception vocabulary.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from kubernetes_asyncio import client

from scheduler.kube import rate_limit, rest
from scheduler.kube.client import kubeconfig_source
from scheduler.kube.rest import Resource, Rest


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any


@dataclass
class Script:
    answers: dict[tuple[str, str], tuple[int, Any]] = field(default_factory=dict)
    seen: list[Recorded] = field(default_factory=list)
    first: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)
    """Answers given before ``answers``, one per request, with their headers."""


def status(code: int, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "code": code,
    }


@pytest.fixture
async def server() -> AsyncIterator[tuple[Script, Rest]]:
    script = Script()

    async def handle(request: web.Request) -> web.StreamResponse:
        text = await request.text()
        script.seen.append(
            Recorded(
                request.method,
                request.path,
                dict(request.query),
                request.headers.get("Content-Type", ""),
                json.loads(text) if text else None,
            )
        )
        if script.first:
            code, payload, headers = script.first.pop(0)
            return web.json_response(payload, status=code, headers=headers)
        code, payload = script.answers.get((request.method, request.path), (404, status(404, "no")))
        if isinstance(payload, list):  # a watch: one JSON object per line
            response = web.StreamResponse(status=code)
            await response.prepare(request)
            for line in payload:
                await response.write(
                    (line if isinstance(line, str) else json.dumps(line)).encode() + b"\n"
                )
            await response.write_eof()
            return response
        return web.json_response(payload, status=code)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    configuration = client.Configuration(host=str(test_server.make_url("")).rstrip("/"))
    async with client.ApiClient(configuration=configuration) as api:
        yield script, Rest(api, timeout=5)
    await test_server.close()


JOB = "/apis/batch/v1/namespaces/ml/jobs/train"


async def test_get_returns_the_json_object_as_a_plain_dict(server: tuple[Script, Rest]) -> None:
    script, api = server
    script.answers[("GET", JOB)] = (200, {"kind": "Job", "metadata": {"name": "train"}})
    found = await api.get(JOB)
    assert found == {"kind": "Job", "metadata": {"name": "train"}}
    assert type(found) is dict


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (404, rest.NotFound),
        (409, rest.Conflict),
        (410, rest.Expired),
        (403, rest.ApiError),
        (422, rest.ApiError),
        (500, rest.ApiError),
    ],
)
async def test_error_statuses_become_the_vocabulary(
    server: tuple[Script, Rest], code: int, error: type[rest.RestError]
) -> None:
    script, api = server
    script.answers[("GET", JOB)] = (code, status(code, f"the server says {code}"))
    with pytest.raises(error) as raised:
        await api.get(JOB)
    assert type(raised.value) is error
    assert raised.value.status == code
    assert f"the server says {code}" in str(raised.value), "the Status message is quoted"


async def test_a_429_that_says_when_is_asked_again_then(server: tuple[Script, Rest]) -> None:
    script, api = server
    busy = status(429, "storage is (re)initializing")
    script.first = [(429, busy, {"Retry-After": "0"}), (429, busy, {"Retry-After": "0"})]
    script.answers[("GET", JOB)] = (200, {"kind": "Job"})
    assert await api.get(JOB) == {"kind": "Job"}
    assert len(script.seen) == 3


async def test_a_429_without_retry_after_is_an_error_at_once(server: tuple[Script, Rest]) -> None:
    script, api = server
    script.first = [(429, status(429, "slow down"), {})]
    script.answers[("GET", JOB)] = (200, {"kind": "Job"})
    with pytest.raises(rest.ApiError, match="HTTP 429: slow down"):
        await api.get(JOB)
    assert len(script.seen) == 1


async def test_a_429_that_lasts_is_an_error_after_the_retries(
    server: tuple[Script, Rest],
) -> None:
    script, api = server
    script.first = [(429, status(429, "still busy"), {"Retry-After": "0"})] * 20
    with pytest.raises(rest.ApiError, match="HTTP 429: still busy") as raised:
        await api.get(JOB)
    assert raised.value.status == 429
    assert len(script.seen) == rate_limit.RETRIES_AFTER_429 + 1


async def test_a_429_retry_never_outlasts_the_call_timeout(server: tuple[Script, Rest]) -> None:
    script, api = server
    script.first = [(429, status(429, "busy"), {"Retry-After": "3"})]
    script.answers[("GET", JOB)] = (200, {"kind": "Job"})
    started = time.monotonic()
    with pytest.raises(rest.ApiError, match="HTTP 429"):
        await api.get(JOB, timeout=1)
    assert time.monotonic() - started < 1
    assert len(script.seen) == 1


@pytest.mark.parametrize(
    "details",
    [
        {},  # what kube-apiserver 1.36 answers: no details at all
        {"causes": [{"message": "testing value /metadata/resourceVersion failed: test failed"}]},
    ],
)
async def test_a_json_patch_that_no_longer_applies_is_a_conflict(
    server: tuple[Script, Rest], details: dict[str, Any]
) -> None:
    script, api = server
    refused = status(422, "the server rejected our request due to an error in our request")
    refused["reason"], refused["details"] = "Invalid", details
    script.answers[("PATCH", JOB)] = (422, refused)
    operations = [{"op": "test", "path": "/metadata/resourceVersion", "value": "7"}]
    with pytest.raises(rest.Conflict, match="rejected our request"):
        await api.json_patch(JOB, operations)
    (sent,) = script.seen
    assert sent.content_type == "application/json-patch+json"
    assert sent.body == operations


async def test_an_invalid_patched_object_is_not_a_conflict(server: tuple[Script, Rest]) -> None:
    script, api = server
    invalid = status(422, 'Job.batch "train" is invalid: spec.parallelism: Invalid value: -1')
    invalid["details"] = {"causes": [{"field": "spec.parallelism", "message": "Invalid value"}]}
    script.answers[("PATCH", JOB)] = (422, invalid)
    with pytest.raises(rest.ApiError, match="spec.parallelism: Invalid value") as raised:
        await api.json_patch(JOB, [{"op": "replace", "path": "/spec/parallelism", "value": -1}])
    assert type(raised.value) is rest.ApiError


async def test_other_patches_send_their_content_types(server: tuple[Script, Rest]) -> None:
    script, api = server
    script.answers[("PATCH", JOB)] = (200, {"kind": "Job"})
    await api.merge_patch(JOB, {"metadata": {"labels": {"a": "b"}}})
    status_path = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads/w/status"
    script.answers[("PATCH", status_path)] = (200, {"kind": "Workload"})
    intent = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "status": {}}
    await api.apply(status_path, intent, field_manager="kueue-admission", force=True)

    merge, apply = script.seen
    assert merge.content_type == "application/merge-patch+json"
    assert merge.body == {"metadata": {"labels": {"a": "b"}}}
    assert apply.method == "PATCH"
    assert apply.content_type == "application/apply-patch+yaml"
    assert apply.query == {"fieldManager": "kueue-admission", "force": "true"}
    assert apply.body == intent, "JSON is YAML: the intent is sent as JSON"


async def test_create_replace_and_list(server: tuple[Script, Rest]) -> None:
    script, api = server
    collection = "/apis/batch/v1/namespaces/ml/jobs"
    script.answers[("POST", collection)] = (201, {"metadata": {"name": "train"}})
    script.answers[("PUT", JOB)] = (200, {"metadata": {"name": "train"}})
    script.answers[("GET", collection)] = (200, {"kind": "JobList", "items": []})
    await api.create(collection, {"metadata": {"name": "train"}})
    await api.replace(JOB, {"metadata": {"name": "train", "resourceVersion": "3"}})
    listed = await api.list(collection, query=[("labelSelector", "kueue.x-k8s.io/queue-name")])
    assert listed == {"kind": "JobList", "items": []}
    post, put, get = script.seen
    assert (post.method, put.method, get.method) == ("POST", "PUT", "GET")
    assert put.body["metadata"]["resourceVersion"] == "3"
    assert get.query == {"labelSelector": "kueue.x-k8s.io/queue-name"}


async def test_a_delete_carries_its_preconditions_and_a_failed_one_is_a_conflict(
    server: tuple[Script, Rest],
) -> None:
    script, api = server
    workload = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads/job-train-1"
    script.answers[("DELETE", workload)] = (200, {"kind": "Status", "status": "Success"})
    await api.delete(workload, preconditions={"uid": "u1", "resourceVersion": "7"})
    (sent,) = script.seen
    assert sent.body == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "u1", "resourceVersion": "7"},
    }
    script.answers[("DELETE", workload)] = (
        409,
        status(409, "Precondition failed: UID in precondition: u1, UID in object meta: u2"),
    )
    with pytest.raises(rest.Conflict):
        await api.delete(workload, preconditions={"uid": "u1"})


async def test_a_watch_yields_each_line_and_a_broken_line_is_an_error(
    server: tuple[Script, Rest],
) -> None:
    script, api = server
    path = "/api/v1/configmaps"
    events = [{"type": "ADDED", "object": {"metadata": {"name": "a"}}}, {"type": "BOOKMARK"}]
    script.answers[("GET", path)] = (200, events)
    assert [event async for event in api.stream(path, query=[("watch", "true")])] == events

    script.answers[("GET", path)] = (200, [events[0], "{not json"])
    seen = []
    with pytest.raises(rest.RestError, match="malformed watch event"):
        async for event in api.stream(path):
            seen.append(event)
    assert seen == events[:1]


async def test_objects_come_back_without_managed_fields(server: tuple[Script, Rest]) -> None:
    script, api = server
    managed = [{"manager": "kueue-admission", "operation": "Apply", "fieldsV1": {"f:status": {}}}]

    def workload(name: str) -> dict[str, object]:
        return {
            "kind": "Workload",
            "metadata": {"name": name, "resourceVersion": "5", "managedFields": managed},
            "status": {"conditions": []},
        }

    def kept(name: str) -> dict[str, object]:
        return {
            "kind": "Workload",
            "metadata": {"name": name, "resourceVersion": "5"},
            "status": {"conditions": []},
        }

    collection = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads"
    one = f"{collection}/a"
    script.answers[("GET", one)] = (200, workload("a"))
    script.answers[("PATCH", one)] = (200, workload("a"))
    script.answers[("GET", collection)] = (200, {"kind": "WorkloadList", "items": [workload("b")]})
    assert await api.get(one) == kept("a")
    assert await api.apply(one, {"status": {}}, field_manager="kueue-admission") == kept("a")
    assert (await api.list(collection))["items"] == [kept("b")]

    watch = "/apis/kueue.x-k8s.io/v1beta2/workloads"
    script.answers[("GET", watch)] = (200, [{"type": "MODIFIED", "object": workload("c")}])
    assert [event async for event in api.stream(watch)] == [
        {"type": "MODIFIED", "object": kept("c")}
    ]


async def test_no_answer_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configuration = client.Configuration(host=f"http://127.0.0.1:{port}")
    async with client.ApiClient(configuration=configuration) as api:
        with pytest.raises(rest.Unreachable):
            await Rest(api, timeout=2).get(JOB)


def test_resource_paths() -> None:
    jobs = Resource("batch", "v1", "jobs")
    assert jobs.path == "/apis/batch/v1/jobs"
    assert jobs.collection_path("ml") == "/apis/batch/v1/namespaces/ml/jobs"
    assert jobs.object_path("t", namespace="ml", subresource="status") == (
        "/apis/batch/v1/namespaces/ml/jobs/t/status"
    )
    namespaces = Resource("", "v1", "namespaces")
    assert namespaces.path == "/api/v1/namespaces"
    assert namespaces.object_path("ml") == "/api/v1/namespaces/ml"


def test_which_kubeconfig_is_loaded() -> None:
    assert kubeconfig_source("/explicit", {"KUBECONFIG": "/env"}) == "/explicit"
    assert kubeconfig_source(None, {"KUBECONFIG": "/a:/b"}) == "/a:/b"
    assert kubeconfig_source(None, {"KUBECONFIG": ":"}) is None, "an empty list is no kubeconfig"
    assert kubeconfig_source(None, {}) is None, "in-cluster"


async def test_a_write_with_a_timeout_sends_the_server_the_same_deadline(
    server: tuple[Script, Rest],
) -> None:
    script, api = server
    script.answers[("PATCH", JOB)] = (200, {"kind": "Job"})
    await api.json_patch(JOB, [{"op": "remove", "path": "/status/startTime"}], timeout=2.5)
    await api.merge_patch(JOB, {"metadata": {}})
    patch, unbounded = script.seen
    assert patch.query == {"timeout": "2500ms"}
    assert unbounded.query == {}
    assert rest.deadline(0.0001) == [("timeout", "1ms")], "never 0 (the server's default)"


@pytest.fixture
async def misbehaving() -> AsyncIterator[Rest]:
    """An API server that answers too late (``/slow``) or drops the connection (``/drop``)."""

    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response({})

    async def drop(request: web.Request) -> web.Response:
        assert request.transport is not None
        request.transport.close()
        return web.json_response({})

    app = web.Application()
    app.router.add_route("*", "/slow", slow)
    app.router.add_route("*", "/drop", drop)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    configuration = client.Configuration(host=str(test_server.make_url("")).rstrip("/"))
    async with client.ApiClient(configuration=configuration) as api:
        yield Rest(api)
    await test_server.close()


async def test_a_write_past_its_timeout_or_a_dropped_connection_is_unreachable(
    misbehaving: Rest,
) -> None:
    started = time.monotonic()
    with pytest.raises(rest.Unreachable):
        await misbehaving.json_patch("/slow", [], timeout=0.3)
    assert time.monotonic() - started < 2
    with pytest.raises(rest.Unreachable):
        await misbehaving.replace("/drop", {}, timeout=5)


async def test_a_write_that_waited_for_its_token_keeps_its_deadline(
    server: tuple[Script, Rest], monkeypatch: pytest.MonkeyPatch
) -> None:
    script, api = server
    bucket = rate_limit.TokenBucket(qps=1.0, burst=1)

    async def waited_two_seconds() -> float:
        return 2.0

    monkeypatch.setattr(bucket, "acquire", waited_two_seconds)
    api.limiter = bucket
    script.answers[("POST", "/api/v1/namespaces/ml/configmaps")] = (200, {"kind": "ConfigMap"})
    await api.create("/api/v1/namespaces/ml/configmaps", {"kind": "ConfigMap"}, timeout=5.0)
    assert script.seen[-1].query["timeout"] == "3000ms", "the server's deadline did not move"
    with pytest.raises(rest.Unreachable, match="deadline passed while waiting"):
        await api.create("/api/v1/namespaces/ml/configmaps", {"kind": "ConfigMap"}, timeout=1.5)
    assert len(script.seen) == 1, "a write past its deadline is not sent"
