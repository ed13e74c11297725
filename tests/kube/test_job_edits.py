"""The executor carries out the rebuild of a changed Job's Workload.

Against the in-memory API server: a pending Job given a nodeSelector the only
flavor does not satisfy gets its Workload replaced (a PUT carrying the
resourceVersion it was read at) and is then not admitted; a resized one is
charged its new size; a Workload admitted for a Job edited before it started
is deleted with preconditions and the Job queued again.
"""

from __future__ import annotations

import copy

from scheduler.api import objects
from scheduler.core.decisions import Admit, Pending
from scheduler.kube.rest import Conflict

from .world import World, job_path, workload_path


def edit_job(world: World, name: str, **pod_spec: object) -> None:
    changed = copy.deepcopy(world.job(name))
    changed["spec"]["template"]["spec"].update(pod_spec)
    world.add(job_path(name), changed)


def resize_job(world: World, name: str, count: int) -> None:
    changed = copy.deepcopy(world.job(name))
    changed["spec"].update(parallelism=count, completions=count)
    world.add(job_path(name), changed)


def calls(world: World, verb: str) -> list[str]:
    return [call.path for call in world.api.calls if call.verb == verb]


async def test_a_pending_job_given_another_flavors_selector_is_rebuilt_and_not_admitted() -> None:
    world = World().setup()
    key = await world.submit("train")
    read_at = world.workload(key)["metadata"]["resourceVersion"]
    edit_job(world, "train", nodeSelector={"instance-type": "ondemand"})

    assert await world.executor.jobs.reconcile_jobs()
    name = key.split("/", 1)[1]
    (put,) = [call for call in world.api.calls if call.verb == "PUT"]
    assert put.path == workload_path(name)
    assert put.body["metadata"]["resourceVersion"] == read_at, "guarded by the version read"
    stored = world.workload(key)
    assert stored["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"] == {
        "instance-type": "ondemand"
    }
    world.deliver()
    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Pending], "spot is not eligible any more"
    assert world.job("train")["spec"]["suspend"] is True
    assert world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"].milli_value() == 0
    await world.writer.events_sent()
    reasons = [
        call.body.get("reason") for call in world.api.calls if call.verb == "POST" and call.body
    ]
    assert "UpdatedWorkload" in reasons


async def test_a_pending_job_resized_is_charged_its_new_size() -> None:
    world = World().setup(cpu="4")
    key = await world.submit("train")
    resize_job(world, "train", 3)
    assert await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert world.workload(key)["spec"]["podSets"][0]["count"] == 3
    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Admit]
    assert world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"].milli_value() == 3000
    assert world.job("train")["spec"]["parallelism"] == 3


async def test_the_rebuild_never_overwrites_an_admission_written_meanwhile() -> None:
    world = World().setup()
    key = await world.submit("train")
    edit_job(world, "train", nodeSelector={"instance-type": "ondemand"})
    world.api.fail("PUT", "/workloads/", Conflict("the object has been modified", status=409))
    assert not await world.executor.jobs.reconcile_jobs()
    assert "uid-train" in world.cluster.jobs_to_decide, "decided again from the fresh object"
    assert "nodeSelector" not in world.workload(key)["spec"]["podSets"][0]["template"]["spec"]


async def test_a_workload_admitted_for_a_job_edited_before_it_started_is_replaced() -> None:
    world = World().setup()
    key = await world.submit("train")
    # The admission is decided and written, but the Job is edited before the
    # scheduler starts it (the user's write lands first).
    result = world.engine.cycle(world.now)
    assert [type(d) for d in result.decisions] == [Admit]
    edit_job(world, "train", nodeSelector={"instance-type": "ondemand"})
    world.cluster.jobs_to_decide.take()
    await world.executor.carry_out(result.decisions)
    assert world.job("train")["spec"]["suspend"] is True, "not started with the old admission"
    assert calls(world, "PATCH") == [workload_path(key.split("/", 1)[1]) + "/status"]
    world.deliver()
    while await world.executor.jobs.reconcile_jobs():
        world.deliver()
    old_uid = "uid-" + key.split("/", 1)[1]
    (deleted,) = [call for call in world.api.calls if call.verb == "DELETE"]
    assert deleted.body == {"uid": old_uid, "resourceVersion": deleted.body["resourceVersion"]}
    assert world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"].milli_value() == 0
    replacement = world.workload(key)
    assert not objects.has_quota_reservation(replacement)
    assert replacement["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"] == {
        "instance-type": "ondemand"
    }
    assert [type(d) for d in (await world.cycle()).decisions] == [Pending]
    assert world.job("train")["spec"]["suspend"] is True


async def test_a_delete_whose_precondition_fails_is_decided_again() -> None:
    world = World().setup()
    key = await world.submit("train")
    result = world.engine.cycle(world.now)
    edit_job(world, "train", nodeSelector={"instance-type": "ondemand"})
    world.cluster.jobs_to_decide.take()
    world.api.fail("DELETE", "/workloads/", Conflict("precondition failed", status=409))
    await world.executor.carry_out(result.decisions)
    assert calls(world, "DELETE"), "tried"
    assert "uid-train" in world.cluster.jobs_to_decide
    assert objects.has_quota_reservation(world.workload(key)), "nothing deleted"
    assert world.state(key) == "Admitted"


async def test_a_late_watch_event_never_puts_an_older_job_back_over_a_write() -> None:
    # The executor keeps the answer of its write; the watch may still deliver
    # versions from before it.  A StartJob computed from such an older copy
    # would fail its resourceVersion test forever (the watch has nothing newer
    # to bring), so the Job would never start.
    world = World().setup()
    await world.submit("train")
    before = copy.deepcopy(world.job("train"))
    edit_job(world, "train", nodeSelector={"zone": "a"})  # delivered: the state has it
    newer = world.cluster.job("uid-train")
    from scheduler.kube.informer import Event

    world.cluster.on_job(Event("MODIFIED", before, "ml/train"))
    assert world.cluster.job("uid-train") is newer, "the older version is not put back"
    assert "uid-train" in world.cluster.jobs_to_decide
    world.cluster.remember(before)  # a write's answer older than the watch's
    assert world.cluster.job("uid-train") is newer
