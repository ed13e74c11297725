"""The pod framework's pure parts: gate, Workload from a Pod, start, stop, finish, finalizer."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, Evict, PodSetAdmission
from scheduler.jobs.actions import (
    CreateWorkload,
    FinalizePod,
    FinishWorkload,
    ReleaseWorkload,
    StartJob,
    StopPod,
    UpdateWorkload,
)
from scheduler.jobs.pod import POD, gate, is_gated, ungate
from scheduler.jobs.pod.controller import next_pod_action
from scheduler.jobs.pod.pods import without_finalizer
from scheduler.jobs.registry import for_object
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.status.workload_status import admitted_status, evicted_status, finished_status
from tests.builders import pod

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
FLAVORS = {
    "spot": FlavorPlacement({"instance-type": "spot"}, ({"key": "spot", "operator": "Exists"},)),
}
GATE = {"name": "kueue.x-k8s.io/admission"}


def sleep() -> pod:
    """Kueue's sample Pod ``sleep`` in ``ml`` as created: queue ``user-queue``, 1 cpu."""
    return (
        pod("sleep", "ml")
        .uid("uid-1")
        .queue("user-queue")
        .labels(app="sleep")
        .image("i")
        .requests(cpu="1")
    )


def workload_of(p: dict[str, Any]) -> dict[str, Any]:
    action = next_pod_action(p, None, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    return action.workload


def admit(workload: dict[str, Any]) -> dict[str, Any]:
    decision = Admit(
        workload="ml/x",
        cluster_queue="cq",
        pod_sets=(PodSetAdmission("main", 1, {"cpu": "spot"}, {"cpu": Quantity.parse("1")}),),
        message="",
    )
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def test_gate_adds_the_gate_label_and_finalizer_once() -> None:
    gated = gate(sleep().build())
    assert gated["spec"]["schedulingGates"] == [GATE, {"name": "kueue.x-k8s.io/topology"}]
    assert gated["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert gated["metadata"]["finalizers"] == ["kueue.x-k8s.io/managed"]
    assert gate(gated) == gated
    assert not is_gated(ungate(gated)) and "schedulingGates" not in ungate(gated)["spec"]
    assert "finalizers" not in without_finalizer(gated)["metadata"]
    assert for_object(gated) is POD


def test_a_pod_gets_one_workload_named_as_kueue_names_it() -> None:
    p = gate(sleep().build())
    workload = workload_of(p)
    digest = hashlib.sha1(b"Pod\n\nsleep\nuid-1").hexdigest()[:5]
    assert workload["metadata"]["name"] == f"pod-sleep-{digest}"
    assert workload["metadata"]["name"] == "pod-sleep-fb178", "Kueue's GetWorkloadNameForPod"
    assert (
        workload["metadata"]["ownerReferences"][0] | {"kind": "Pod", "uid": "uid-1"}
        == (workload["metadata"]["ownerReferences"][0])
    )
    (pod_set,) = workload["spec"]["podSets"]
    assert (pod_set["name"], pod_set["count"]) == ("main", 1)
    assert pod_set["template"] == {"spec": p["spec"]}
    assert workload["spec"]["queueName"] == "user-queue"


def test_an_admitted_pod_is_ungated_and_steered_to_the_flavor() -> None:
    p = gate(sleep().build())
    workload = admit(workload_of(p))
    action = next_pod_action(p, workload, flavors=FLAVORS)
    assert isinstance(action, StartJob) and action.cluster_queue == "cq"
    started = action.job
    assert "schedulingGates" not in started["spec"]
    assert started["spec"]["nodeSelector"] == {"instance-type": "spot"}
    assert started["spec"]["tolerations"] == [{"key": "spot", "operator": "Exists"}]
    assert started["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "main"
    assert next_pod_action(started, workload, flavors=FLAVORS) is None


def test_a_pending_pod_waits_gated_and_unmanaged_pods_are_not_ours() -> None:
    p = gate(sleep().build())
    assert next_pod_action(p, workload_of(p), flavors=FLAVORS) is None
    unmanaged = {**p, "metadata": {**p["metadata"], "labels": {"kueue.x-k8s.io/queue-name": "q"}}}
    assert next_pod_action(unmanaged, None, flavors=FLAVORS) is None


def test_an_evicted_running_pod_is_stopped_and_a_gated_one_gives_its_quota_back() -> None:
    p = gate(sleep().build())
    workload = admit(workload_of(p))
    evict = Evict(victim="ml/x", preemptor="ml/y", reason="InClusterQueue", message="preempted")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted = {**workload, "status": status}
    started = next_pod_action(p, workload, flavors=FLAVORS)
    assert isinstance(started, StartJob)
    stop = next_pod_action(started.job, evicted, flavors=FLAVORS)
    assert stop == StopPod("WorkloadEvictedDueToPreempted", "preempted")
    assert isinstance(next_pod_action(p, evicted, flavors=FLAVORS), ReleaseWorkload)
    deleting = {
        **started.job,
        "metadata": {**started.job["metadata"], "deletionTimestamp": "2026-11-25T12:00:01Z"},
    }
    assert isinstance(next_pod_action(deleting, evicted, flavors=FLAVORS), FinalizePod)


def test_a_running_pod_without_admission_is_stopped() -> None:
    p = gate(sleep().build())
    workload = workload_of(p)
    action = next_pod_action(ungate(p), workload, flavors=FLAVORS)
    assert action == StopPod("NotAdmitted", "Not admitted by cluster queue")


def test_a_finished_pod_finishes_its_workload_then_loses_the_finalizer() -> None:
    for phase, reason in (("Succeeded", "Succeeded"), ("Failed", "Failed")):
        done = gate(sleep().phase(phase, "done").build())
        workload = admit(workload_of(gate(sleep().build())))
        action = next_pod_action(done, workload, flavors=FLAVORS)
        assert action == FinishWorkload(reason, "done")
        status = finished_status(workload, reason=reason, message="done", now=NOW)
        assert status is not None
        finished = {**workload, "status": status}
        assert isinstance(next_pod_action(done, finished, flavors=FLAVORS), FinalizePod)
        assert next_pod_action(without_finalizer(done), finished, flavors=FLAVORS) is None


def test_without_a_queue_name_a_pod_is_gated_only_when_kuota_manages_such_pods() -> None:
    """manageJobsWithoutQueueName (docs/configuration.md)."""
    from scheduler.jobs.pod.pods import gate_on_create

    unqueued = pod("bare", "ml").uid("uid-2").image("i").requests(cpu="1").build()
    assert gate_on_create(unqueued) is None
    gated = gate_on_create(unqueued, without_queue_name=True)
    assert gated is not None and gated["spec"]["schedulingGates"] == [
        GATE,
        {"name": "kueue.x-k8s.io/topology"},
    ]
    assert gated["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"


def test_a_managed_pod_without_a_queue_waits_unqueued_until_it_is_given_one() -> None:
    unqueued = gate(pod("bare", "ml").uid("uid-2").image("i").requests(cpu="1").build())
    workload = workload_of(unqueued)
    assert "queueName" not in workload["spec"]
    assert next_pod_action(unqueued, workload, flavors=FLAVORS) is None
    named = {
        **unqueued,
        "metadata": {
            **unqueued["metadata"],
            "labels": {**unqueued["metadata"]["labels"], "kueue.x-k8s.io/queue-name": "q"},
        },
    }
    action = next_pod_action(named, workload, flavors=FLAVORS)
    assert isinstance(action, UpdateWorkload) and action.workload["spec"]["queueName"] == "q"
