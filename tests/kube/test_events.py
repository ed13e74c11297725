"""Events: complete core/v1 bodies, repeats aggregated into one Event, never in the way."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler.kube.events import (
    MAX_MESSAGE,
    REPEAT_WINDOW,
    EventRecorder,
    Occurrence,
    Written,
    WrittenCache,
    event_key,
    new_event,
    repeat_patch,
)
from scheduler.kube.rest import ApiError
from tests.builders import job
from tests.clock import FakeClock
from tests.kube.fake_api import FakeApi

T0 = datetime(2026, 11, 22, 11, 0, 0, tzinfo=UTC)
EVENTS_PATH = "/api/v1/namespaces/ml/events"


def train() -> job:
    """Job ``ml/train`` as a list returns it: metadata only (uid ``uid-train``, version 7)."""
    return job("train", "ml").uid("uid-train").resource_version(7).unset("spec")


def stored_events(api: FakeApi) -> list[dict[str, Any]]:
    return [obj for path, obj in api.store.items() if path.startswith(EVENTS_PATH + "/")]


def recorder(api: FakeApi, clock: FakeClock, **kwargs: Any) -> EventRecorder:
    return EventRecorder(api, instance="kuota-scheduler-0", clock=clock, **kwargs)


# -- pure parts ---------------------------------------------------------------------------


def test_a_new_event_is_complete_as_kubectl_reads_it() -> None:
    key = event_key(
        train().listed(), kind="Job", reason="Started", message="x" * 5000, event_type="Normal"
    )
    occurrence = Occurrence(
        key=key, involved=train().listed(), first=T0, last=T0 + timedelta(seconds=3)
    )
    body = new_event(occurrence, instance="kuota-scheduler-0")
    assert body["involvedObject"] == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "train",
        "namespace": "ml",
        "uid": "uid-train",
        "resourceVersion": "7",
    }
    assert body["metadata"] == {"generateName": "train.", "namespace": "ml"}
    assert (body["firstTimestamp"], body["lastTimestamp"]) == (
        "2026-11-22T11:00:00Z",
        "2026-11-22T11:00:03Z",
    )
    assert body["count"] == 1
    assert body["source"] == {"component": "kuota-scheduler", "host": "kuota-scheduler-0"}
    assert (body["reportingComponent"], body["reportingInstance"]) == (
        "kuota-scheduler",
        "kuota-scheduler-0",
    )
    assert (body["type"], body["reason"]) == ("Normal", "Started")
    assert len(body["message"]) == MAX_MESSAGE
    assert "eventTime" not in body, "a core/v1 Event with eventTime is judged by the new API"


def test_an_event_about_a_cluster_scoped_object_lives_in_default() -> None:
    queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "metadata": {"name": "cq", "uid": "u"}}
    key = event_key(queue, kind="ClusterQueue", reason="R", message="m", event_type="Normal")
    body = new_event(Occurrence(key=key, involved=queue, first=T0, last=T0), instance="i")
    assert body["metadata"]["namespace"] == "default"
    assert "namespace" not in body["involvedObject"], "kubectl describe looks for none"


def test_the_aggregation_key_is_object_type_reason_and_message() -> None:
    def key(**overrides: Any) -> object:
        args: dict[str, Any] = {
            "kind": "Job",
            "reason": "Started",
            "message": "Admitted by clusterQueue cq",
            "event_type": "Normal",
        }
        involved = overrides.pop("involved", train().listed())
        return event_key(involved, **{**args, **overrides})

    assert key() == key()
    assert key() != key(message="Admitted by clusterQueue other")
    assert key() != key(reason="Stopped")
    assert key() != key(event_type="Warning")
    assert key() != key(involved=train().uid("uid-recreated").listed()), "a new object, a new Event"
    assert key(message="a" * 2000) == key(message="a" * 3000), "compared as written (capped)"


def test_a_repeat_patch_adds_the_occurrences_and_moves_last_seen() -> None:
    key = event_key(train().listed(), kind="Job", reason="R", message="m", event_type="Normal")
    later = T0 + timedelta(minutes=2)
    occurrence = Occurrence(key=key, involved={}, first=later, last=later, count=2)
    assert repeat_patch(Written("train.abc", "ml", 3, T0), occurrence) == {
        "count": 5,
        "lastTimestamp": "2026-11-22T11:02:00Z",
    }


def test_the_cache_answers_within_the_window_of_the_last_occurrence() -> None:
    cache = WrittenCache(size=10, window=timedelta(minutes=10))
    key = event_key(train().listed(), kind="Job", reason="R", message="m", event_type="Normal")
    cache.remember(key, Written("train.abc", "ml", 1, T0))
    assert cache.find(key, T0 + timedelta(minutes=10)) is not None
    cache.remember(key, Written("train.abc", "ml", 2, T0 + timedelta(minutes=10)))
    assert cache.find(key, T0 + timedelta(minutes=19)) is not None, "the window slides"
    assert cache.find(key, T0 + timedelta(minutes=21)) is None
    assert len(cache) == 0, "a stale entry is dropped"


def test_the_cache_is_bounded_least_recently_used_out_first() -> None:
    cache = WrittenCache(size=2)
    keys = [
        event_key(train().listed(), kind="Job", reason="R", message=str(i), event_type="Normal")
        for i in range(3)
    ]
    cache.remember(keys[0], Written("a", "ml", 1, T0))
    cache.remember(keys[1], Written("b", "ml", 1, T0))
    assert cache.find(keys[0], T0) is not None  # used: now the most recent
    cache.remember(keys[2], Written("c", "ml", 1, T0))
    assert len(cache) == 2
    assert cache.find(keys[1], T0) is None, "the least recently used went"
    assert cache.find(keys[0], T0) is not None and cache.find(keys[2], T0) is not None


# -- the recorder over an in-memory API ------------------------------------------------------


async def test_recording_returns_at_once_and_writes_in_the_background() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock)
    events.record(
        train().listed(), kind="Job", reason="Started", message="Admitted by clusterQueue cq"
    )
    assert api.calls == [], "nothing is written before the caller yields"
    await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 1 and event["lastTimestamp"] == "2026-11-22T11:00:00Z"


async def test_an_event_repeated_n_times_is_one_event_with_count_n() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock)
    for _ in range(3):
        events.record(train().listed(), kind="Job", reason="Stopped", message="preempted")
        clock.advance(1)
    await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 3, "repeats still queued are merged into one write"
    assert event["firstTimestamp"] == "2026-11-22T11:00:00Z"
    assert event["lastTimestamp"] == "2026-11-22T11:00:02Z"
    assert [call.verb for call in api.calls] == ["POST"]

    for _ in range(2):
        clock.advance(30)
        events.record(train().listed(), kind="Job", reason="Stopped", message="preempted")
        await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 5
    assert event["firstTimestamp"] == "2026-11-22T11:00:00Z"
    assert event["lastTimestamp"] == "2026-11-22T11:01:03Z"
    assert [call.verb for call in api.calls] == ["POST", "MERGE", "MERGE"]


async def test_a_repeat_during_the_create_patches_instead_of_creating_twice() -> None:
    api, clock = FakeApi(latency=0.02), FakeClock(T0)
    events = recorder(api, clock)
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await asyncio.sleep(0.005)  # the create is in flight
    assert [call.verb for call in api.calls] == ["POST"]
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 2
    assert [call.verb for call in api.calls] == ["POST", "MERGE"]


async def test_a_repeat_after_the_window_is_a_new_event() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock)
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    clock.advance((REPEAT_WINDOW + timedelta(seconds=1)).total_seconds())
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    assert sorted(event["count"] for event in stored_events(api)) == [1, 1]


async def test_an_event_expired_on_the_server_is_written_anew() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock)
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    for path in [path for path in api.store if path.startswith(EVENTS_PATH + "/")]:
        del api.store[path]  # the API server's Event TTL
    clock.advance(60)
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 1 and event["firstTimestamp"] == "2026-11-22T11:01:00Z"
    assert [call.verb for call in api.calls] == ["POST", "MERGE", "POST"]


async def test_a_full_queue_drops_and_counts_and_writes_the_rest() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock, queue_size=2)
    for index in range(3):
        events.record(train().listed(), kind="Job", reason="Started", message=f"m{index}")
    events.record(train().listed(), kind="Job", reason="Started", message="m0")  # merged: kept
    assert (events.dropped, events.queued) == (1, 2)
    await events.flush()
    assert sorted((e["message"], e["count"]) for e in stored_events(api)) == [("m0", 2), ("m1", 1)]


async def test_a_failed_write_is_dropped_and_counted_not_retried() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    events = recorder(api, clock)
    api.fail("POST", "/events", ApiError("HTTP 403: forbidden", status=403))
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    assert events.dropped == 1 and stored_events(api) == []
    events.record(train().listed(), kind="Job", reason="Started", message="m")
    await events.flush()
    (event,) = stored_events(api)
    assert event["count"] == 1


async def test_writes_in_flight_are_bounded_and_the_recorder_idles_without_tasks() -> None:
    api, clock = FakeApi(latency=0.005), FakeClock(T0)
    events = recorder(api, clock, in_flight=3)
    for index in range(20):
        events.record(
            job(f"job-{index}", "ml")
            .uid(f"uid-{index}")
            .resource_version(7)
            .unset("spec")
            .listed(),
            kind="Job",
            reason="R",
            message="m",
        )
    await events.flush()
    assert len(stored_events(api)) == 20
    assert api.most_concurrent == 3
    assert not events.busy, "no task is left waiting once the queue is empty"


async def test_an_event_queued_as_the_last_sender_finishes_is_still_sent() -> None:
    """The sender's task is done a step before its done-callbacks run: no event may fall there."""
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[None] = loop.create_future()

    at_gate = asyncio.Event()

    class GatedApi(FakeApi):
        async def create(
            self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
        ) -> dict[str, Any]:
            created = await super().create(path, body, timeout=timeout)
            at_gate.set()
            await gate  # past this, the sender finishes without yielding again
            return created

    api, clock = GatedApi(), FakeClock(T0)
    events = recorder(api, clock, in_flight=1)
    events.record(
        job("a", "ml").uid("uid-a").resource_version(7).unset("spec").listed(),
        kind="Job",
        reason="R",
        message="m",
    )
    await at_gate.wait()
    gate.set_result(None)  # the sender's last step is scheduled first ...
    loop.call_soon(  # ... then this, which runs before the finished task's callbacks
        lambda: events.record(
            job("b", "ml").uid("uid-b").resource_version(7).unset("spec").listed(),
            kind="Job",
            reason="R",
            message="m",
        )
    )
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    await events.flush()
    assert sorted(event["involvedObject"]["name"] for event in stored_events(api)) == ["a", "b"]


async def test_writes_go_through_the_timed_wrapper() -> None:
    api, clock = FakeApi(), FakeClock(T0)
    seen: list[tuple[str, str]] = []

    async def timed(verb: str, resource: str, send: Any, /) -> Any:
        seen.append((verb, resource))
        return await send(None)

    events = recorder(api, clock, timed=timed)
    events.record(train().listed(), kind="Job", reason="R", message="m")
    await events.flush()
    events.record(train().listed(), kind="Job", reason="R", message="m")
    await events.flush()
    assert seen == [("create", "events"), ("patch", "events")]
