"""The resource-in-use finalizer: kept while in use, removed by a guarded patch once free."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from scheduler.api.refs import RESOURCE_IN_USE_FINALIZER
from scheduler.kube.fence import Fenced, LeaseFence
from scheduler.kube.finalizers import (
    FinalizerReleaser,
    finalizer_removal,
    flavors_named,
    releasable_flavors,
)
from scheduler.kube.rest import ApiError

from .world import KUEUE, World, cluster_queue, flavor, workload_path

CQ_PATH = f"{KUEUE}/clusterqueues/cq"
FLAVOR_PATH = f"{KUEUE}/resourceflavors/spot"
DELETED_AT = "2026-11-22T12:00:00Z"
OTHER_FINALIZER = "example.com/keep"


def deleting(obj: dict[str, Any], *finalizers: str) -> dict[str, Any]:
    marked = copy.deepcopy(obj)
    marked["metadata"]["deletionTimestamp"] = DELETED_AT
    marked["metadata"]["finalizers"] = list(finalizers or [RESOURCE_IN_USE_FINALIZER])
    return marked


def releaser(world: World) -> FinalizerReleaser:
    return FinalizerReleaser(engine=world.engine, state=world.cluster, writer=world.writer)


def patch_calls(world: World) -> list[Any]:
    return [call for call in world.api.calls if call.verb == "PATCH"]


def finalizers(world: World, path: str) -> list[str]:
    return list(world.api.store[path]["metadata"].get("finalizers", []))


async def admitted(world: World, name: str = "train") -> str:
    key = await world.submit(name)
    await world.cycle()
    world.deliver()
    assert world.state(key) == "Admitted"
    return key


def with_condition(world: World, key: str, kind: str, reason: str, message: str) -> None:
    """The stored Workload ``key`` updated with a True condition, as the watch brings it."""
    path = workload_path(key.split("/", 1)[1])
    stored = copy.deepcopy(world.api.store[path])
    stored["status"]["conditions"].append(
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": DELETED_AT,
        }
    )
    world.add(path, stored)


def finish(world: World, key: str) -> None:
    with_condition(world, key, "Finished", "Succeeded", "done")


# -- pure parts -----------------------------------------------------------------------------


def test_the_removal_tests_the_version_and_the_index_and_keeps_other_finalizers() -> None:
    obj = {
        "metadata": {
            "name": "cq",
            "resourceVersion": "42",
            "finalizers": [OTHER_FINALIZER, RESOURCE_IN_USE_FINALIZER],
        }
    }
    operations = finalizer_removal(obj, RESOURCE_IN_USE_FINALIZER)
    assert operations == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "test", "path": "/metadata/finalizers/1", "value": RESOURCE_IN_USE_FINALIZER},
        {"op": "remove", "path": "/metadata/finalizers/1"},
    ]
    assert jsonpatch.apply_patch(obj, operations)["metadata"]["finalizers"] == [OTHER_FINALIZER]
    moved = {"metadata": {**obj["metadata"], "finalizers": [RESOURCE_IN_USE_FINALIZER]}}
    try:
        jsonpatch.apply_patch(moved, operations)
    except jsonpatch.JsonPatchTestFailed:
        pass
    else:
        raise AssertionError("a finalizer list that changed must fail the patch")
    assert finalizer_removal({"metadata": {"finalizers": [OTHER_FINALIZER]}}, "x") is None
    assert finalizer_removal({"metadata": {}}, RESOURCE_IN_USE_FINALIZER) is None


def test_a_flavor_is_in_use_while_any_existing_queue_names_it() -> None:
    queue = cluster_queue()
    assert flavors_named(queue) == {"spot"}
    flavors = {"spot": deleting(flavor()), "idle": deleting(flavor()), "kept": flavor()}
    flavors["idle"]["metadata"]["name"] = "idle"
    flavors["kept"]["metadata"]["name"] = "kept"
    terminating_queue = deleting(queue)
    assert list(releasable_flavors(flavors, {"cq": terminating_queue})) == ["idle"]
    assert list(releasable_flavors(flavors, {})) == ["spot", "idle"]


# -- ClusterQueues ----------------------------------------------------------------------------


async def test_a_deleted_queue_with_nothing_admitted_loses_the_finalizer_at_once() -> None:
    world = World().setup()
    world.add(
        CQ_PATH, deleting(world.api.store[CQ_PATH], OTHER_FINALIZER, RESOURCE_IN_USE_FINALIZER)
    )
    version = world.api.store[CQ_PATH]["metadata"]["resourceVersion"]
    finalizer = releaser(world)

    await finalizer.release()

    (call,) = patch_calls(world)
    assert call.path == CQ_PATH
    assert call.body[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": version}
    assert finalizers(world, CQ_PATH) == [OTHER_FINALIZER]
    held = world.cluster.stored("ClusterQueue")["cq"]
    assert held["metadata"]["resourceVersion"] == version, (
        "the state is the watch's: an answer stored after a DELETED event would resurrect it"
    )
    await finalizer.release()
    assert len(patch_calls(world)) == 1, "that version was patched already: no second write"
    world.deliver()
    await finalizer.release()
    assert len(patch_calls(world)) == 1, "nothing left to remove"


async def test_a_deleted_queue_stays_terminating_until_its_last_reservation_goes() -> None:
    world = World().setup()
    key = await admitted(world)
    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH]))
    finalizer = releaser(world)

    await finalizer.release()
    assert finalizers(world, CQ_PATH) == [RESOURCE_IN_USE_FINALIZER]
    status = world.engine.view.cluster_queue_status("cq")
    assert (status.active, status.active_reason) == (False, "Terminating")
    late = await world.submit("late")
    assert (await world.cycle()).admitted == 0, "a terminating queue admits nothing new"
    assert world.state(late) == "Pending"

    finish(world, key)
    await finalizer.release()
    assert finalizers(world, CQ_PATH) == []


async def test_a_deleted_queue_stays_terminating_when_its_admitted_workload_is_updated() -> None:
    world = World().setup()
    key = await admitted(world)
    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH]))
    finalizer = releaser(world)
    await finalizer.release()

    with_condition(world, key, "PodsReady", "PodsReady", "All pods reached readiness")
    await finalizer.release()

    assert finalizers(world, CQ_PATH) == [RESOURCE_IN_USE_FINALIZER]
    status = world.engine.view.cluster_queue_status("cq")
    assert (status.active, status.active_reason) == (False, "Terminating")
    finish(world, key)
    await finalizer.release()
    assert finalizers(world, CQ_PATH) == []


async def test_a_queue_already_deleting_when_the_scheduler_starts_keeps_its_reservations() -> None:
    before = World().setup()
    key = await admitted(before)
    before.add(CQ_PATH, deleting(before.api.store[CQ_PATH]))

    after = World()  # a new leader lists everything: the queue is deleting from the start
    after.api = before.api
    after.writer.rest = before.api
    for path in sorted(before.api.store):
        after.api.put(path, before.api.store[path])
    after.deliver()
    finalizer = releaser(after)

    await finalizer.release()
    assert finalizers(after, CQ_PATH) == [RESOURCE_IN_USE_FINALIZER]
    finish(after, key)
    await finalizer.release()
    assert finalizers(after, CQ_PATH) == []


async def test_a_refused_removal_is_not_repeated_every_turn() -> None:
    world = World().setup()
    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH]))
    world.api.fail("PATCH", "/clusterqueues/cq", ApiError("HTTP 403: forbidden", status=403))
    finalizer = releaser(world)
    await finalizer.release()
    await finalizer.release()
    assert len(patch_calls(world)) == 1
    world.add(CQ_PATH, world.api.store[CQ_PATH])  # it changed: worth another try
    await finalizer.release()
    assert len(patch_calls(world)) == 2
    assert finalizers(world, CQ_PATH) == []


async def test_a_queue_that_moved_is_decided_again_from_the_fresh_object() -> None:
    world = World().setup()
    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH]))
    world.api.put(CQ_PATH, world.api.store[CQ_PATH])  # someone else's write, not seen yet
    finalizer = releaser(world)
    await finalizer.release()
    assert finalizers(world, CQ_PATH) == [RESOURCE_IN_USE_FINALIZER], "the guard refused"
    world.deliver()
    await finalizer.release()
    assert finalizers(world, CQ_PATH) == []


# -- ResourceFlavors -----------------------------------------------------------------------------


async def test_a_deleted_flavor_goes_once_no_queue_names_it() -> None:
    world = World().setup()
    world.add(FLAVOR_PATH, deleting(world.api.store[FLAVOR_PATH]))
    finalizer = releaser(world)
    await finalizer.release()
    assert finalizers(world, FLAVOR_PATH) == [RESOURCE_IN_USE_FINALIZER], "cq names it"

    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH]))
    await finalizer.release()
    assert finalizers(world, CQ_PATH) == []
    assert finalizers(world, FLAVOR_PATH) == [RESOURCE_IN_USE_FINALIZER], (
        "the queue still exists until the API server deletes it"
    )
    queue = world.api.store.pop(CQ_PATH)
    world.api.pending_events.append(("DELETED", queue))
    world.deliver()
    await finalizer.release()
    assert finalizers(world, FLAVOR_PATH) == []


async def test_a_fenced_replica_removes_no_finalizer() -> None:
    world = World().setup()
    world.writer.fence = LeaseFence(lease_duration=15, renew_deadline=10)  # never renewed
    world.add(CQ_PATH, deleting(world.api.store[CQ_PATH], RESOURCE_IN_USE_FINALIZER))
    with pytest.raises(Fenced):
        await releaser(world).release()
    assert patch_calls(world) == []
    assert finalizers(world, CQ_PATH) == [RESOURCE_IN_USE_FINALIZER]


async def test_a_finished_workload_with_the_finalizer_loses_it_and_keeps_others() -> None:
    world = World().setup()
    key = await admitted(world)
    path = workload_path(key.split("/", 1)[1])
    held = copy.deepcopy(world.api.store[path])
    held["metadata"]["finalizers"] = [OTHER_FINALIZER, RESOURCE_IN_USE_FINALIZER]
    world.add(path, held)
    world.deliver()
    finalizer = releaser(world)
    await finalizer.release()
    assert finalizers(world, path) == [OTHER_FINALIZER, RESOURCE_IN_USE_FINALIZER], (
        "admitted and running: it keeps the finalizer"
    )
    finish(world, key)
    world.deliver()
    await finalizer.release()
    assert finalizers(world, path) == [OTHER_FINALIZER]
