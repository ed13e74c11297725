"""The writer: guarded patches, one write per object at a time, errors by meaning."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.api.refs import V1BETA2
from scheduler.kube.rest import ApiError, Conflict, NotFound
from scheduler.kube.writer import Writer, kueue_resource, workload_status_apply
from tests.builders import condition

from .fake_api import FakeApi
from .world import job, job_path, workload_path


def stored_job(api: FakeApi, name: str = "train") -> dict:  # type: ignore[type-arg]
    return api.put(job_path(name), job(name))


async def test_a_job_patch_tests_the_version_it_was_computed_from() -> None:
    api = FakeApi(latency=0)
    writer = Writer(api)
    old = stored_job(api)
    new = {**old, "spec": {**old["spec"], "suspend": False}}

    result = await writer.patch_job(old, new)

    (call,) = api.calls
    assert call.verb == "PATCH" and call.path == job_path("train")
    assert call.body[0] == {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": old["metadata"]["resourceVersion"],
    }
    assert call.body[1:] == [{"op": "replace", "path": "/spec/suspend", "value": False}]
    assert result["spec"]["suspend"] is False
    assert writer.counts["patch jobs"] == 1


async def test_a_patch_computed_from_a_stale_object_is_a_conflict_and_changes_nothing() -> None:
    api = FakeApi()
    writer = Writer(api)
    old = stored_job(api)
    api.put(job_path("train"), {**old, "metadata": {**old["metadata"], "labels": {"x": "y"}}})

    with pytest.raises(Conflict):
        await writer.patch_job(old, {**old, "spec": {**old["spec"], "suspend": False}})
    assert api.store[job_path("train")]["spec"]["suspend"] is True


async def test_an_unchanged_job_costs_no_write() -> None:
    api = FakeApi()
    writer = Writer(api)
    old = stored_job(api)
    assert await writer.patch_job(old, dict(old)) == old
    assert api.calls == []


async def test_a_queue_status_write_diffs_against_the_stored_status() -> None:
    api = FakeApi()
    writer = Writer(api)
    path = kueue_resource("clusterqueues").object_path("cq")
    queue = api.put(path, {"metadata": {"name": "cq"}})

    await writer.write_status("clusterqueues", queue, {"conditions": [{"type": "X"}]})
    (first,) = api.calls
    assert first.path == path + "/status"
    assert first.body[0]["op"] == "test"
    assert first.body[1:] == [
        {"op": "add", "path": "/status", "value": {"conditions": [{"type": "X"}]}}
    ], "an object without status gets it whole"

    stored = api.store[path]
    await writer.write_status("clusterqueues", stored, {"conditions": [{"type": "Y"}]})
    assert api.calls[1].body[1:] == [
        {"op": "replace", "path": "/status/conditions/0/type", "value": "Y"}
    ]


AT = "2026-11-22T12:00:00Z"  # every condition's time


ADMISSION = {
    "clusterQueue": "cq",
    "podSetAssignments": [
        {"name": "main", "flavors": {"cpu": "spot"}, "resourceUsage": {"cpu": "1"}, "count": 1}
    ],
}


async def test_a_workload_status_is_applied_as_kueue_admission_forced_and_conditional() -> None:
    api = FakeApi()
    writer = Writer(api)
    workload = api.put(
        workload_path("w"),
        {
            "apiVersion": V1BETA2,
            "kind": "Workload",
            "metadata": {"name": "w", "namespace": "ml", "uid": "u", "labels": {"a": "b"}},
            "spec": {"queueName": "lq"},
            "status": {
                "conditions": [condition("example.com/Other", "False", reason="R", at=AT)],
                "requeueState": {"count": 1},
            },
        },
    )
    status = {
        "conditions": [
            condition("example.com/Other", "False", reason="R", at=AT),
            condition("QuotaReserved", "True", reason="R", at=AT),
            condition("Admitted", "True", reason="R", at=AT),
        ],
        "requeueState": {"count": 1},
        "admission": ADMISSION,
    }

    stored = await writer.write_workload_status(workload, status)

    (call,) = api.calls
    assert call.verb == "PATCH" and call.path == workload_path("w") + "/status"
    assert api.applies == [(call.path, "kueue-admission", True)]
    assert call.body == {
        "apiVersion": V1BETA2,
        "kind": "Workload",
        "metadata": {
            "name": "w",
            "namespace": "ml",
            "resourceVersion": workload["metadata"]["resourceVersion"],
        },
        "status": {
            "conditions": [
                condition("QuotaReserved", "True", reason="R", at=AT),
                condition("Admitted", "True", reason="R", at=AT),
            ],
            "admission": ADMISSION,
        },
    }, "only the scheduler's fields, nothing other writers own"
    assert stored["status"]["admission"] == ADMISSION
    assert [c["type"] for c in stored["status"]["conditions"]] == [
        "example.com/Other",
        "QuotaReserved",
        "Admitted",
    ]
    assert writer.counts["patch workloads/status"] == 1


def test_the_applied_configuration_of_a_status_without_admission_leaves_it_out() -> None:
    workload = {"metadata": {"name": "w", "namespace": "ml", "resourceVersion": "7"}}
    body = workload_status_apply(
        workload,
        {"conditions": [condition("QuotaReserved", "False", reason="R", at=AT)], "admission": None},
    )
    assert body["status"] == {
        "conditions": [condition("QuotaReserved", "False", reason="R", at=AT)]
    }
    assert body["metadata"] == {"name": "w", "namespace": "ml", "resourceVersion": "7"}


async def test_a_workload_status_applied_from_a_stale_read_is_a_conflict() -> None:
    api = FakeApi()
    writer = Writer(api)
    read = api.put(workload_path("w"), {"metadata": {"name": "w", "namespace": "ml"}})
    api.put(workload_path("w"), {**read, "spec": {"active": False}})

    with pytest.raises(Conflict):
        await writer.write_workload_status(
            read,
            {
                "conditions": [condition("QuotaReserved", "True", reason="R", at=AT)],
                "admission": ADMISSION,
            },
        )
    assert "admission" not in api.store[workload_path("w")].get("status", {})


async def test_an_applied_status_without_the_admission_removes_it() -> None:
    api = FakeApi()
    writer = Writer(api)
    read = api.put(workload_path("w"), {"metadata": {"name": "w", "namespace": "ml"}})
    admitted = await writer.write_workload_status(
        read,
        {
            "conditions": [condition("QuotaReserved", "True", reason="R", at=AT)],
            "admission": ADMISSION,
        },
    )
    released = await writer.write_workload_status(
        admitted, {"conditions": [condition("QuotaReserved", "False", reason="R", at=AT)]}
    )
    assert "admission" not in released["status"], "the field manager owned it: omitted is removed"
    assert released["status"]["conditions"] == [
        condition("QuotaReserved", "False", reason="R", at=AT)
    ]


async def test_an_admission_another_manager_co_owns_is_removed_by_a_guarded_patch() -> None:
    api = FakeApi()
    writer = Writer(api)
    # Written before the scheduler applied as kueue-admission: by a JSON patch.
    read = api.put(
        workload_path("w"),
        {
            "metadata": {"name": "w", "namespace": "ml"},
            "status": {
                "conditions": [condition("QuotaReserved", "True", reason="R", at=AT)],
                "admission": ADMISSION,
            },
        },
    )
    released = await writer.write_workload_status(
        read, {"conditions": [condition("QuotaReserved", "False", reason="R", at=AT)]}
    )
    assert "admission" not in released["status"]
    assert api.store[workload_path("w")]["status"] == released["status"]
    apply, removal = api.calls
    assert api.applies == [(apply.path, "kueue-admission", True)]
    assert removal.body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "102"},
        {"op": "remove", "path": "/status/admission"},
    ]


async def test_writes_to_one_object_are_serialised_and_to_different_objects_are_not() -> None:
    api = FakeApi(latency=0.02)
    writer = Writer(api)
    a, b = stored_job(api, "a"), stored_job(api, "b")

    def started(obj: dict) -> dict:  # type: ignore[type-arg]
        return {**obj, "spec": {**obj["spec"], "suspend": False}}

    def relabelled(obj: dict) -> dict:  # type: ignore[type-arg]
        return {**obj, "metadata": {**obj["metadata"], "labels": {"x": "y"}}}

    outcomes = await asyncio.gather(
        writer.patch_job(a, started(a)),
        writer.patch_job(a, relabelled(a)),
        writer.patch_job(b, started(b)),
        return_exceptions=True,
    )

    assert api.most_in_flight[job_path("a")] == 1, "one write per object at a time"
    assert api.most_concurrent >= 2, "different objects are written concurrently"
    assert isinstance(outcomes[1], Conflict), (
        "the second, computed from the same read, must recompute"
    )
    assert api.store[job_path("a")]["spec"]["suspend"] is False
    assert api.store[job_path("b")]["spec"]["suspend"] is False


async def test_creating_an_existing_workload_is_not_an_error() -> None:
    api = FakeApi()
    writer = Writer(api)
    workload = {"metadata": {"name": "w", "namespace": "ml"}, "spec": {}}
    assert await writer.create_workload(workload) is True
    assert await writer.create_workload(workload) is False, "a retry after a crash"


async def test_other_errors_keep_their_meaning() -> None:
    api = FakeApi()
    writer = Writer(api)
    gone = {"metadata": {"name": "gone", "namespace": "ml", "resourceVersion": "1"}}
    with pytest.raises(NotFound):
        await writer.write_workload_status(gone, {"conditions": []})
    old = stored_job(api)
    api.fail("PATCH", job_path("train"), ApiError("HTTP 403: forbidden", status=403))
    with pytest.raises(ApiError):
        await writer.patch_job(old, {**old, "spec": {**old["spec"], "suspend": False}})
    assert writer.counts["patch workloads/status"] == 1 and writer.counts["patch jobs"] == 1


async def test_events_are_sent_in_the_background_and_a_failed_one_is_dropped() -> None:
    api = FakeApi()
    writer = Writer(api)
    involved = stored_job(api)
    api.fail("POST", "/events", ApiError("HTTP 500", status=500))
    writer.event(involved, kind="Job", reason="Started", message="first")
    writer.event(involved, kind="Job", reason="Started", message="x" * 5000)
    await writer.events_sent()

    sent = [call.body for call in api.calls if call.verb == "POST"]
    assert len(sent) == 2
    stored = [obj for path, obj in api.store.items() if "/events/" in path]
    assert len(stored) == 1, "the failed Event is not retried"
    (event,) = stored
    assert event["involvedObject"]["uid"] == "uid-train"
    assert len(event["message"]) == 1024
    assert event["metadata"]["namespace"] == "ml"
