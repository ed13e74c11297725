"""The executor writes what a job's changes mean for its Workload.

Against the in-memory API server: a parallel Job whose pods finished gets its
Workload's ``status.reclaimablePods`` applied as Kueue's Job controller applies
it (field manager ``kueue-reclaimable-pods``), which frees the quota of the
pods no longer needed for a waiting Job; a Job whose WorkloadPriorityClass label
changed gets its Workload's priority updated by a guarded PUT, with Kueue's
``UpdatedWorkload`` Event.
"""

from __future__ import annotations

import copy

from scheduler.api.refs import RECLAIMABLE_PODS_FIELD_MANAGER
from scheduler.core.decisions import Admit
from scheduler.kube.writer import reclaimable_pods_apply
from tests.builders import workload_priority_class

from .world import KUEUE, World, job, job_path, workload_path

PRIORITY = "kueue.x-k8s.io/priority-class"


async def test_finished_pods_of_a_parallel_job_free_their_quota_for_a_waiting_job() -> None:
    world = World().setup(cpu="2")
    parallel = job("wide")
    parallel["spec"].update(parallelism=2, completions=4)
    world.add(job_path("wide"), parallel)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert [type(d) for d in (await world.cycle()).decisions] == [Admit]
    world.deliver()
    await world.executor.jobs.reconcile_jobs()  # started
    world.deliver()
    waiting = await world.submit("next")
    assert not [d for d in (await world.cycle()).decisions if isinstance(d, Admit)]

    running = copy.deepcopy(world.job("wide"))
    running["status"] = {"active": 1, "succeeded": 3}
    world.add(job_path("wide"), running)
    assert await world.executor.jobs.reconcile_jobs()
    (apply,) = [a for a in world.api.applies if a[1] == RECLAIMABLE_PODS_FIELD_MANAGER]
    wide = next(k for k in world.engine.view.workload_keys() if "wide" in k)
    assert apply == (
        workload_path(wide.split("/", 1)[1]) + "/status",
        "kueue-reclaimable-pods",
        True,
    )
    assert world.workload(wide)["status"]["reclaimablePods"] == [{"name": "main", "count": 1}]
    world.deliver()
    admitted = [d for d in (await world.cycle()).decisions if isinstance(d, Admit)]
    assert [d.workload for d in admitted] == [waiting], "the freed CPU admits the waiting Job"
    world.deliver()
    await world.executor.jobs.reconcile_jobs()
    assert world.api.applies.count(apply) == 1, "written once"


def test_the_applied_configuration_holds_only_the_reclaimable_pods() -> None:
    workload = {
        "metadata": {"name": "w", "namespace": "ml", "resourceVersion": "7", "labels": {"a": "b"}},
        "spec": {"podSets": []},
        "status": {"conditions": []},
    }
    assert reclaimable_pods_apply(workload, [("main", 2)]) == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ml", "resourceVersion": "7"},
        "status": {"reclaimablePods": [{"name": "main", "count": 2}]},
    }
    assert reclaimable_pods_apply(workload, [])["status"] == {}, "none: the list goes"


async def test_a_changed_priority_class_label_updates_the_pending_workload() -> None:
    world = World().setup(cpu="2")
    for name, value in (("low", 100), ("high", 300)):
        world.add(
            f"{KUEUE}/workloadpriorityclasses/{name}", workload_priority_class(name, value).build()
        )
    labelled = job("train")
    labelled["metadata"].setdefault("labels", {})[PRIORITY] = "low"
    world.add(job_path("train"), labelled)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    key = next(iter(world.engine.view.workload_keys()))
    assert world.workload(key)["spec"]["priority"] == 100
    read_at = world.workload(key)["metadata"]["resourceVersion"]

    raised = copy.deepcopy(world.job("train"))
    raised["metadata"]["labels"][PRIORITY] = "high"
    world.add(job_path("train"), raised)
    assert await world.executor.jobs.reconcile_jobs()
    (put,) = [call for call in world.api.calls if call.verb == "PUT"]
    assert put.body["metadata"]["resourceVersion"] == read_at, "guarded by the version read"
    stored = world.workload(key)["spec"]
    assert (stored["priority"], stored["priorityClassRef"]["name"]) == (300, "high")
    world.deliver()
    assert world.engine.view.records[key].priority == 300
    await world.writer.events_sent()
    messages = [
        call.body.get("message")
        for call in world.api.calls
        if call.verb == "POST" and call.body and call.body.get("reason") == "UpdatedWorkload"
    ]
    assert messages == [f"Updated workload priority class: {key}"]
