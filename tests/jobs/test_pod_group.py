"""Pod groups' pure parts: assembly by role, one Workload once complete, all or nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, PodSetAdmission
from scheduler.jobs.actions import (
    CreateWorkload,
    FinalizePod,
    FinalizePods,
    FinishWorkload,
    SetReclaimablePods,
    SetWaitingForReplacement,
    StartPods,
)
from scheduler.jobs.pod import gate, ungate
from scheduler.jobs.pod.controller import next_pod_action
from scheduler.jobs.pod.group import group_key_of_workload, group_pod_sets, next_group_action
from scheduler.jobs.pod.pods import is_gated, role_hash
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.status.workload_status import admitted_status, finished_status
from tests.builders import pod

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
FLAVORS = {"spot": FlavorPlacement({"instance-type": "spot"})}


def member(index: int) -> pod:
    """Pod ``index`` of Kueue's sample group of 3 (queue ``user-queue``, 1 cpu), as created."""
    return (
        pod(f"sample-{index}", "ml")
        .uid(f"uid-{index}")
        .queue("user-queue")
        .group("sample-group", 3)
        .image("i")
        .requests(cpu="1")
    )


def admit(workload: dict[str, Any]) -> dict[str, Any]:
    pod_sets = tuple(
        PodSetAdmission(p["name"], p["count"], {"cpu": "spot"}, {"cpu": Quantity.parse("1")})
        for p in workload["spec"]["podSets"]
    )
    decision = Admit(workload="ml/sample-group", cluster_queue="cq", pod_sets=pod_sets, message="")
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def test_pods_form_one_pod_set_per_role_sorted_and_counted() -> None:
    pods = [
        gate(member(0).requests(cpu="2").build()),
        gate(member(1).build()),
        gate(member(2).build()),
    ]
    pod_sets = group_pod_sets(pods)
    assert [(p["name"], p["count"]) for p in pod_sets] == sorted(
        [(role_hash(pods[0]), 1), (role_hash(pods[1]), 2)]
    )
    assert role_hash(pods[1]) == role_hash(pods[2]) != role_hash(pods[0])


def test_the_workload_waits_for_every_pod_then_is_named_after_the_group() -> None:
    pods = [gate(member(0).build()), gate(member(1).build()), gate(member(2).build())]
    assert next_group_action(pods[:2], None, flavors=FLAVORS) is None
    action = next_group_action(pods, None, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    workload = action.workload
    assert workload["metadata"]["name"] == "sample-group"
    assert [o["uid"] for o in workload["metadata"]["ownerReferences"]] == [
        "uid-0",
        "uid-1",
        "uid-2",
    ]
    assert group_key_of_workload(workload) == "podgroup/ml/sample-group"
    assert [(p["count"]) for p in workload["spec"]["podSets"]] == [3]
    assert next_pod_action(pods[0], None, flavors=FLAVORS) is None, "groups are decided as one"


def test_admission_ungates_every_pod_at_once_and_never_some() -> None:
    pods = [gate(member(0).build()), gate(member(1).build()), gate(member(2).build())]
    created = next_group_action(pods, None, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    assert next_group_action(pods, created.workload, flavors=FLAVORS) is None, "all stay gated"
    action = next_group_action(pods, admit(created.workload), flavors=FLAVORS)
    assert isinstance(action, StartPods) and len(action.pods) == 3
    for old, new in action.pods:
        assert is_gated(old) and not is_gated(new)
        assert new["spec"]["nodeSelector"] == {"instance-type": "spot"}


def test_the_group_finishes_when_every_pod_succeeded_then_loses_its_finalizers() -> None:
    pods = [gate(member(0).build()), gate(member(1).build()), gate(member(2).build())]
    created = next_group_action(pods, None, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    workload = admit(created.workload)
    done = [ungate(gate(member(i).phase("Succeeded").build())) for i in range(3)]
    running = ungate(gate(member(2).phase("Running").build()))
    role = workload["spec"]["podSets"][0]["name"]
    reclaim = next_group_action(done[:2] + [running], workload, flavors=FLAVORS)
    assert reclaim == SetReclaimablePods(((role, 2),)), "the succeeded pods give quota back"
    workload["status"]["reclaimablePods"] = [{"name": role, "count": 2}]
    assert next_group_action(done[:2] + [running], workload, flavors=FLAVORS) is None
    action = next_group_action(done, workload, flavors=FLAVORS)
    assert action == FinishWorkload("Succeeded", "Pods succeeded: 3/3.")
    status = finished_status(workload, reason="Succeeded", message="m", now=NOW)
    finalize = next_group_action(done, {**workload, "status": status}, flavors=FLAVORS)
    assert isinstance(finalize, FinalizePods) and len(finalize.pods) == 3
    assert not isinstance(finalize, FinalizePod)


def test_a_fast_admission_group_is_queued_from_its_first_pod_and_never_finishes() -> None:
    def sts_pod(index: int, phase: str | None = None) -> dict[str, Any]:
        created = member(index)
        if phase:
            created.phase(phase)
        pod = gate(created.build())
        pod["metadata"]["annotations"] |= {
            "kueue.x-k8s.io/pod-group-fast-admission": "true",
            "kueue.x-k8s.io/pod-group-serving": "true",
        }
        pod["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "s"}
            | {"controller": True}
        ]
        return pod

    action = next_group_action([sts_pod(0)], None, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    workload = action.workload
    assert [p["count"] for p in workload["spec"]["podSets"]] == [3]
    assert [o["kind"] for o in workload["metadata"]["ownerReferences"]] == ["StatefulSet"]
    admitted = admit(workload)
    started = next_group_action([sts_pod(0)], admitted, flavors=FLAVORS)
    assert isinstance(started, StartPods) and len(started.pods) == 1
    later = [ungate(sts_pod(0, "Running")), sts_pod(1)]
    started = next_group_action(later, admitted, flavors=FLAVORS)
    assert isinstance(started, StartPods) and len(started.pods) == 1, "a late pod joins"
    done = [ungate(sts_pod(i, "Succeeded")) for i in range(3)]
    assert next_group_action(done, admitted, flavors=FLAVORS) is None, "serving: never finished"


def test_an_evicted_group_stops_its_running_pods_then_gives_its_quota_back() -> None:
    from scheduler.core.decisions import Evict
    from scheduler.jobs.actions import ReleaseWorkload, StopPods
    from scheduler.status.workload_status import evicted_status

    pods = [gate(member(0).build()), gate(member(1).build()), gate(member(2).build())]
    created = next_group_action(pods, None, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    workload = admit(created.workload)
    evict = Evict(victim="ml/sample-group", preemptor="ml/y", reason="InClusterQueue", message="m")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted = {**workload, "status": status}
    running = [ungate(gate(member(i).phase("Running").build())) for i in range(3)]
    stop = next_group_action(running, evicted, flavors=FLAVORS)
    assert isinstance(stop, StopPods) and len(stop.pods) == 3
    assert stop.reason == "WorkloadEvictedDueToPreempted"
    assert isinstance(next_group_action(pods, evicted, flavors=FLAVORS), ReleaseWorkload)


def test_an_evicted_group_keeps_its_quota_while_a_pod_is_in_its_grace_period() -> None:
    from scheduler.core.decisions import Evict
    from scheduler.jobs.actions import ReleaseWorkload
    from scheduler.jobs.pod.pods import without_finalizer
    from scheduler.status.workload_status import evicted_status

    created = next_group_action([gate(member(i).build()) for i in range(3)], None, flavors=FLAVORS)
    assert isinstance(created, CreateWorkload)
    workload = admit(created.workload)
    evict = Evict(victim="ml/sample-group", preemptor="ml/y", reason="InClusterQueue", message="m")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted = {**workload, "status": status}
    stopping = []
    for i in range(3):
        pod = without_finalizer(ungate(gate(member(i).phase("Running").build())))
        pod["metadata"]["deletionTimestamp"] = "2026-11-22T12:00:00Z"
        pod["spec"]["nodeName"] = "n1"
        stopping.append(pod)
    assert next_group_action(stopping, evicted, flavors=FLAVORS) is None, "still terminating"
    ended = [{**pod, "status": {"phase": "Failed"}} for pod in stopping]
    waiting = next_group_action(ended, evicted, flavors=FLAVORS)
    assert waiting == SetWaitingForReplacement(True, "Preempted", "m"), "as Kueue: the eviction's"
    evicted["status"]["conditions"].append(
        {
            "type": "WaitingForReplacementPods",
            "status": "True",
            "reason": "Preempted",
            "message": "m",
        }
    )
    assert isinstance(next_group_action(ended, evicted, flavors=FLAVORS), ReleaseWorkload)


def test_role_hashes_are_kueues() -> None:
    """Expected values from Kueue v0.19.2's ``GenerateRoleHash`` run on the same specs."""
    simple = {
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
            ]
        }
    }
    full = {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                    "resources": {
                        "requests": {"memory": "36Gi", "cpu": "300m"},
                        "limits": {"cpu": "1"},
                    },
                }
            ],
            "initContainers": [{"name": "init", "image": "i"}],
            "nodeSelector": {"zone": "a", "instance-type": "spot"},
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
            ],
            "priority": 1000,
            "priorityClassName": "high",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}
                        ]
                    }
                }
            },
        }
    }
    two = {
        "spec": {
            "containers": [
                {"name": "a", "image": "i"},
                {"name": "b", "image": "i", "resources": {}},
            ],
            "runtimeClassName": "rc",
        }
    }
    assert [role_hash(p) for p in (simple, full, two)] == ["dc85db45", "749f8c7f", "9a3acf21"]
