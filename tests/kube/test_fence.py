"""Fencing: a write leaves only while the Lease is held, judged from when the last renewal was sent.

A fake clock stands for ``CLOCK_BOOTTIME``; the Lease lock runs over the
in-memory API server, so "sent", "succeeded" and "refused" are exact.
"""

from __future__ import annotations

import json

import pytest

from scheduler.kube.events import EventRecorder
from scheduler.kube.fence import Fenced, LeaseFence
from scheduler.kube.leader import LEASES, RestLeaseLock
from scheduler.kube.rest import Unreachable
from scheduler.kube.writer import Writer
from tests.clock import FakeClock
from tests.kube.fake_api import FakeApi
from tests.kube.world import job, job_path

LEASE = LEASES.object_path("kuota", namespace="kuota-system")


def fence(clock: FakeClock) -> LeaseFence:
    return LeaseFence(lease_duration=15, renew_deadline=10, clock=clock.monotonic)


def lock(api: FakeApi, clock: FakeClock, identity: str = "replica-a") -> RestLeaseLock:
    return RestLeaseLock(
        api,
        name="kuota",
        namespace="kuota-system",
        identity=identity,
        fence=fence(clock),
        timeout=10,
        clock=clock.monotonic,
    )


def test_writes_are_allowed_only_in_a_term_and_before_sent_plus_renew_deadline() -> None:
    clock = FakeClock()
    gate = fence(clock)
    gate.renewed(clock.monotonic())
    with pytest.raises(Fenced):
        gate.write_timeout()  # renewed, but no term started: a leftover write of an old term
    gate.start_term()
    assert gate.write_timeout() == 15, "the write may take until sent + lease_duration"
    clock.advance(9.5)
    assert gate.may_write()
    assert gate.write_timeout() == pytest.approx(5.5)
    clock.advance(0.5)
    assert not gate.may_write()
    with pytest.raises(Fenced, match="10.0s ago"):
        gate.write_timeout()
    gate.renewed(clock.monotonic() - 1)  # a renewal sent a second ago succeeded
    assert gate.write_timeout() == 14
    gate.close()
    with pytest.raises(Fenced):
        gate.write_timeout()


async def test_the_lock_records_when_a_successful_acquire_was_sent_not_when_it_answered() -> None:
    clock = FakeClock()
    api = FakeApi()
    lease_lock = lock(api, clock)

    found, missing = await lease_lock.get("kuota", "kuota-system")
    assert not found and json.loads(missing.body)["code"] == 404  # type: ignore[union-attr]

    async def slow_create(*args: object, **kwargs: object) -> dict[str, object]:
        clock.advance(4)  # the answer comes 4 s after the request left
        return await FakeApi.create(api, *args, **kwargs)  # type: ignore[arg-type]

    api.create = slow_create  # type: ignore[method-assign]
    record = _record("replica-a")
    assert await lease_lock.create("kuota", "kuota-system", record) is True
    assert lease_lock.fence.sent == 1000.0
    stored = api.store[LEASE]
    assert stored["spec"]["holderIdentity"] == "replica-a"
    assert stored["spec"]["leaseDurationSeconds"] == 15


async def test_connection_errors_are_failed_attempts_never_exceptions() -> None:
    clock = FakeClock()
    api = FakeApi()
    lease_lock = lock(api, clock)
    assert await lease_lock.create("kuota", "kuota-system", _record("replica-a"))
    sent = lease_lock.fence.sent

    api.fail("GET", "leases", Unreachable("connection refused"))
    found, error = await lease_lock.get("kuota", "kuota-system")
    assert not found and json.loads(error.body)["code"] != 404  # type: ignore[union-attr]

    assert (await lease_lock.get("kuota", "kuota-system"))[0]
    clock.advance(2)
    api.fail("PUT", "leases", Unreachable("connection reset"))
    assert await lease_lock.update("kuota", "kuota-system", _record("replica-a")) is False
    assert lease_lock.fence.sent == sent, "a failed renewal moves nothing"
    assert await lease_lock.update("kuota", "kuota-system", _record("replica-a")) is True
    assert lease_lock.fence.sent == sent + 2


async def test_an_update_from_a_stale_read_fails_so_two_replicas_cannot_both_win() -> None:
    clock = FakeClock()
    api = FakeApi()
    first, second = lock(api, clock, "replica-a"), lock(api, clock, "replica-b")
    assert await first.create("kuota", "kuota-system", _record("replica-a"))
    assert (await first.get("kuota", "kuota-system"))[0]
    assert (await second.get("kuota", "kuota-system"))[0]
    assert await second.update("kuota", "kuota-system", _record("replica-b"))
    assert await first.update("kuota", "kuota-system", _record("replica-a")) is False
    assert api.store[LEASE]["spec"]["holderIdentity"] == "replica-b"
    assert api.store[LEASE]["spec"]["leaseTransitions"] == 1
    assert second.fence.sent == clock.monotonic() and first.fence.sent == clock.monotonic()


async def test_release_empties_the_holder_only_when_this_replica_holds_it() -> None:
    clock = FakeClock()
    api = FakeApi()
    first, second = lock(api, clock, "replica-a"), lock(api, clock, "replica-b")
    assert await first.create("kuota", "kuota-system", _record("replica-a"))
    assert (await second.get("kuota", "kuota-system"))[0]
    assert await second.release() is False, "replica-b does not hold it"
    assert await first.release() is True
    spec = api.store[LEASE]["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    found, record = await second.get("kuota", "kuota-system")
    assert found and record.holder_identity is None  # type: ignore[union-attr]


async def test_the_writer_refuses_a_fenced_write_and_sends_the_rest_with_the_lease_timeout() -> (
    None
):
    clock = FakeClock()
    api = FakeApi()
    gate = fence(clock)
    writer = Writer(api, fence=gate)
    old = api.put(job_path("train"), job("train"))
    new = {**old, "spec": {**old["spec"], "suspend": False}}

    with pytest.raises(Fenced):
        await writer.patch_job(old, new)  # never leading yet
    gate.renewed(clock.monotonic())
    gate.start_term()
    clock.advance(3)
    await writer.patch_job(old, new)
    (call,) = api.calls
    assert call.timeout == 12, "until sent + lease_duration"

    clock.advance(7)  # 10 s since the renewal was sent: the deadline
    stored = api.store[job_path("train")]
    with pytest.raises(Fenced):
        await writer.patch_job(stored, {**stored, "spec": {**stored["spec"], "parallelism": 2}})
    assert len(api.calls) == 1, "nothing left the process"
    assert writer.fenced["patch jobs"] == 2 and writer.counts["patch jobs"] == 1


async def test_a_fenced_event_is_dropped_quietly() -> None:
    clock = FakeClock()
    api = FakeApi()
    writer = Writer(api, fence=fence(clock))
    recorder: EventRecorder = writer.events
    recorder.record(job("train"), kind="Job", reason="Started", message="m")
    await recorder.flush()
    assert api.calls == [] and recorder.dropped == 1


def _record(holder: str):  # type: ignore[no-untyped-def]
    from kubernetes_asyncio.leaderelection.leaderelectionrecord import LeaderElectionRecord

    return LeaderElectionRecord(holder, "15", "now", "now")


async def test_a_renewal_that_conflicts_only_outside_spec_is_sent_again_on_the_fresh_version() -> (
    None
):
    clock = FakeClock()
    api = FakeApi()
    first, second = lock(api, clock, "replica-a"), lock(api, clock, "replica-b")
    assert await first.create("kuota", "kuota-system", _record("replica-a"))
    assert await second.create("kuota", "kuota-system", _record("replica-b")) is False
    owned = api.store[LEASE]
    api.put(LEASE, {**owned, "metadata": {**owned["metadata"], "ownerReferences": [{"uid": "d"}]}})
    clock.advance(2)
    assert await first.update("kuota", "kuota-system", _record("replica-a")) is True
    assert first.fence.sent == clock.monotonic()
    assert api.store[LEASE]["metadata"]["ownerReferences"] == [{"uid": "d"}]


async def test_a_lease_created_by_the_lock_names_its_owner_and_renewals_keep_it() -> None:
    clock = FakeClock()
    api = FakeApi()
    lease_lock = lock(api, clock)
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "kuota-scheduler", "uid": "d"}
    lease_lock.owner = owner
    assert await lease_lock.create("kuota", "kuota-system", _record("replica-a"))
    assert api.store[LEASE]["metadata"]["ownerReferences"] == [owner]
    assert (await lease_lock.get("kuota", "kuota-system"))[0]
    clock.advance(2)
    assert await lease_lock.update("kuota", "kuota-system", _record("replica-a"))
    assert api.store[LEASE]["metadata"]["ownerReferences"] == [owner], "a renewal keeps it"
