"""A pod group with its Workload: failed pods kept until replaced, excess pods removed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, PodSetAdmission
from scheduler.jobs.actions import (
    CreateWorkload,
    FinalizePods,
    OwnWorkload,
    RemoveExcessPods,
    SetWaitingForReplacement,
    StartPods,
)
from scheduler.jobs.pod import gate, ungate
from scheduler.jobs.pod.group import next_group_action
from scheduler.jobs.pod.pods import has_finalizer
from scheduler.jobs.pod.replacement import is_active, measure
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.status.workload_status import admitted_status
from tests.builders import pod

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
FLAVORS = {"spot": FlavorPlacement({"instance-type": "spot"})}
DELETED = "2026-11-25T12:05:00Z"


def member(name: str, *, created: str = "2026-11-25T12:00:00Z") -> dict[str, Any]:
    built = (
        pod(name, "ml")
        .uid(f"uid-{name}")
        .queue("q")
        .group("g", 3)
        .image("i")
        .requests(cpu="1")
        .build()
    )
    built["metadata"]["creationTimestamp"] = created
    return gate(built)


def running(p: dict[str, Any], phase: str = "Running") -> dict[str, Any]:
    started = ungate(p)
    started["spec"]["nodeName"] = "n1"
    started["status"] = {"phase": phase}
    return started


def admitted_group() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    pods = [member(f"g-{i}") for i in range(3)]
    action = next_group_action(pods, None, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    workload = action.workload
    pod_sets = tuple(
        PodSetAdmission(p["name"], p["count"], {"cpu": "spot"}, {"cpu": Quantity.parse("3")})
        for p in workload["spec"]["podSets"]
    )
    decision = Admit(workload="ml/g", cluster_queue="cq", pod_sets=pod_sets, message="")
    workload = {**workload, "status": admitted_status(workload, decision, NOW)}
    return [running(p) for p in pods], workload


def with_condition(workload: dict[str, Any], status: str, reason: str, message: str) -> None:
    conditions = workload["status"]["conditions"]
    conditions[:] = [c for c in conditions if c["type"] != "WaitingForReplacementPods"]
    conditions.append(
        {
            "type": "WaitingForReplacementPods",
            "status": status,
            "reason": reason,
            "message": message,
        }
    )


def test_a_pod_is_active_until_it_fails_or_is_deleted_unbound() -> None:
    bound = running(member("a"))
    assert is_active(bound) and is_active({**bound, "status": {"phase": "Succeeded"}})
    assert not is_active({**bound, "status": {"phase": "Failed"}})
    deleting_bound = {**bound, "metadata": {**bound["metadata"], "deletionTimestamp": DELETED}}
    assert is_active(deleting_bound), "still running its grace period"
    unbound = member("b")
    unbound["metadata"]["deletionTimestamp"] = DELETED
    assert not is_active(unbound)


def test_a_failed_pod_keeps_its_finalizer_and_the_workload_waits_for_its_replacement() -> None:
    pods, workload = admitted_group()
    pods[0] = {**pods[0], "status": {"phase": "Failed"}}
    pods[0]["metadata"] = {**pods[0]["metadata"], "deletionTimestamp": DELETED}
    action = next_group_action(pods, workload, flavors=FLAVORS)
    assert action == SetWaitingForReplacement(
        True, "PodsFailed", "Some Failed pods need replacement"
    )
    assert has_finalizer(pods[0]), "kept, Failed, until replaced"
    with_condition(workload, "True", "PodsFailed", "Some Failed pods need replacement")
    assert next_group_action(pods, workload, flavors=FLAVORS) is None

    replacement = member("replacement", created="2026-11-25T12:06:00Z")
    group = [*pods, replacement]
    finalize = next_group_action(group, workload, flavors=FLAVORS)
    assert isinstance(finalize, FinalizePods)
    assert [old["metadata"]["name"] for old, _ in finalize.pods] == ["g-0"]
    group = group[1:]
    own = next_group_action(group, workload, flavors=FLAVORS)
    assert isinstance(own, OwnWorkload)
    owners = [o["name"] for o in own.workload["metadata"]["ownerReferences"]]
    assert owners == ["g-0", "g-1", "g-2", "replacement"]
    workload = own.workload
    ready = next_group_action(group, workload, flavors=FLAVORS)
    assert ready == SetWaitingForReplacement(False, "PodsReady", "No pods need replacement")
    with_condition(workload, "False", "PodsReady", "No pods need replacement")
    start = next_group_action(group, workload, flavors=FLAVORS)
    assert isinstance(start, StartPods)
    assert [old["metadata"]["name"] for old, _ in start.pods] == ["replacement"]


def test_a_pod_beyond_the_workloads_count_is_removed_the_last_created_first() -> None:
    pods, workload = admitted_group()
    excess = member("excess", created="2026-11-25T12:09:00Z")
    action = next_group_action([*pods, excess], workload, flavors=FLAVORS)
    assert isinstance(action, RemoveExcessPods)
    [(old, new)] = action.pods
    assert old["metadata"]["name"] == "excess" and not has_finalizer(new)


def test_measure_counts_absent_pods_per_role() -> None:
    pods, workload = admitted_group()
    found = measure([pods[0], {**pods[1], "status": {"phase": "Failed"}}], workload)
    assert found.absent == 2
    assert [p["metadata"]["name"] for p in found.kept] == ["g-0", "g-1"]
    assert not found.replaced and not found.excess


def test_a_deleted_pod_of_a_group_without_workload_loses_its_finalizer_at_once() -> None:
    lone = member("g-0")
    lone["metadata"]["deletionTimestamp"] = DELETED
    action = next_group_action([lone], None, flavors=FLAVORS)
    assert isinstance(action, FinalizePods)


def test_an_evicted_groups_pods_deleted_without_grace_give_the_quota_back() -> None:
    from scheduler.core.decisions import Evict
    from scheduler.jobs.actions import ReleaseWorkload
    from scheduler.status.workload_status import evicted_status

    pods, workload = admitted_group()
    evict = Evict(victim="ml/g", preemptor="ml/y", reason="InClusterQueue", message="m")
    status = evicted_status(workload, evict, NOW)
    assert status is not None
    evicted = {**workload, "status": status}
    stopping = []
    for p in pods:
        deleted = {**p, "metadata": {**p["metadata"], "deletionTimestamp": DELETED}}
        deleted["metadata"]["deletionGracePeriodSeconds"] = 30
        stopping.append(deleted)
    assert next_group_action(stopping, evicted, flavors=FLAVORS) is None, "in their grace period"
    for p in stopping:
        p["metadata"]["deletionGracePeriodSeconds"] = 0
    assert isinstance(next_group_action(stopping, evicted, flavors=FLAVORS), ReleaseWorkload)
    assert all(has_finalizer(p) for p in stopping), "kept until replaced"


def test_of_two_failed_pods_one_replacement_releases_the_one_that_failed_first() -> None:
    pods, workload = admitted_group()
    for p, deleted in ((pods[0], "2026-11-25T12:05:00Z"), (pods[1], "2026-11-25T12:07:00Z")):
        p["status"] = {"phase": "Failed"}
        p["metadata"]["deletionTimestamp"] = deleted
    replacement = member("replacement", created="2026-11-25T12:08:00Z")
    found = measure([*pods, replacement], workload)
    assert [p["metadata"]["name"] for p in found.replaced] == ["g-0"]
    assert found.absent == 1
