"""The StatefulSet integration: its Workload made from the set, its pods' group, scale to zero."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduler.api import objects
from scheduler.jobs import (
    HoldAtZero,
    JobIntegration,
    QueuedThroughPods,
    ReplicaGroups,
    by_framework,
    capability,
)
from scheduler.jobs.actions import CreateWorkload
from scheduler.jobs.pod.group import group_key_of_pod, group_key_of_workload, next_group_action
from scheduler.jobs.replica_groups import (
    HoldWorkload,
    PlacePods,
    ReleaseHold,
    ReplaceWorkload,
    next_replica_actions,
)
from scheduler.jobs.statefulset import STATEFULSET
from scheduler.jobs.statefulset.replicas import group_name, place_pod
from scheduler.jobs.statefulset.validation import validate_statefulset
from scheduler.jobs.workload_from_job import PriorityClasses
from scheduler.status.workload_status import off_hold_status, on_hold_status
from tests.builders import pod, stateful_set, workload

SUSPENDING_PARENT = "kueue.x-k8s.io/pod-suspending-parent"
QUEUE = "kueue.x-k8s.io/queue-name"
GATE = {"name": "kueue.x-k8s.io/admission"}
NOW = datetime(2026, 1, 1, tzinfo=UTC)

KUEUE_NAMES = {
    # GetWorkloadName(uid, name) of Kueue v0.19.2's statefulset package, run by hand.
    ("sts-uid", "sts"): "statefulset-sts-d8800",
    ("0c8a5b2e-1f3d-4c6e-9a7b-2d4e6f8a0b1c", "db"): "statefulset-db-c2513",
    ("", "db"): "statefulset-db-ae577",
}


def queued(replicas: int = 3, queue: str = "user-queue") -> dict[str, Any]:
    """A queued StatefulSet as stored: marked by the webhook, with its UID."""
    built = stateful_set("sts", "ns", replicas).uid("sts-uid").queue(queue).image("i")
    return STATEFULSET.propagate(built.build())


def sts_pod(
    name: str = "sts-0", *, gated: bool = True, queue: str = "user-queue"
) -> dict[str, Any]:
    """A pod the StatefulSet controller made from the marked template, as the webhook left it."""
    built = (
        pod(name, "ns")
        .uid(f"{name}-uid")
        .queue(queue)
        .annotations({SUSPENDING_PARENT: "statefulset"})
        .owner("StatefulSet", "sts", "sts-uid", api_version="apps/v1", controller=True)
    )
    if gated:
        built.pod_spec(schedulingGates=[GATE])
    return built.build()


def admitted_workload(sts: dict[str, Any]) -> dict[str, Any]:
    made = STATEFULSET.replica_workloads(sts)[group_name(sts)]
    held = workload(objects.name(made), "ns").reserve_quota("cq").admitted().build()
    return {**made, "status": held["status"]}


def test_the_kind_is_registered_with_what_it_does() -> None:
    kind = by_framework("statefulset")
    assert kind is STATEFULSET
    assert capability(kind, ReplicaGroups) is not None
    assert capability(kind, QueuedThroughPods) is not None
    assert capability(kind, HoldAtZero) is not None
    assert capability(kind, JobIntegration) is None, "never suspended: no Workload of its own"


def test_the_workload_is_named_as_kueue_names_it_from_the_uid() -> None:
    for (uid, name), expected in KUEUE_NAMES.items():
        sts = stateful_set(name, "ns").uid(uid or None).queue("q").build()
        assert group_name(sts) == expected
    other = stateful_set("sts", "ns").uid("another-uid").queue("q").build()
    assert group_name(other) != KUEUE_NAMES[("sts-uid", "sts")], "a new set, a new name"


def test_the_workload_is_made_from_the_statefulset() -> None:
    sts = queued(3)
    sts["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    made = STATEFULSET.replica_workloads(sts, priority_classes=PriorityClasses({"high": 7}))
    assert list(made) == ["statefulset-sts-d8800"]
    wl = made["statefulset-sts-d8800"]
    assert wl["spec"]["queueName"] == "user-queue"
    assert wl["spec"]["priority"] == 7
    assert wl["spec"]["priorityClassRef"]["name"] == "high"
    [pod_set] = wl["spec"]["podSets"]
    assert (pod_set["name"], pod_set["count"]) == ("main", 3)
    assert pod_set["template"]["metadata"] == {}, "the template's spec alone, as Kueue's"
    assert pod_set["topologyRequest"] == {"podIndexLabel": "apps.kubernetes.io/pod-index"}
    assert wl["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": "sts-uid"}
    assert wl["metadata"]["annotations"]["kueue.x-k8s.io/job-owner-gvk"] == (
        "apps/v1, Kind=StatefulSet"
    )
    [owner] = wl["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("StatefulSet", "sts-uid", True)
    assert group_key_of_workload(wl) == "podgroup/ns/statefulset-sts-d8800"


def test_no_workload_is_made_at_zero_replicas_or_for_another_frameworks_set() -> None:
    assert STATEFULSET.replica_workloads(queued(0)) == {}
    lws_child = stateful_set("sts", "ns").uid("u").queue("q").build()
    lws_child["spec"]["template"]["metadata"]["annotations"] = {SUSPENDING_PARENT: "lws"}
    assert STATEFULSET.replica_workloads(lws_child) == {}
    assert STATEFULSET.propagate(lws_child) == lws_child, "its template is left as it is"


def test_a_gated_pod_joins_the_group_of_the_workload() -> None:
    sts = queued(3)
    placed = place_pod(sts, sts_pod())
    assert placed is not None
    assert placed["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert placed["metadata"]["annotations"] == {
        SUSPENDING_PARENT: "statefulset",
        "kueue.x-k8s.io/pod-group-name": "statefulset-sts-d8800",
        "kueue.x-k8s.io/prebuilt-workload-name": "statefulset-sts-d8800",
        "kueue.x-k8s.io/pod-group-total-count": "3",
        "kueue.x-k8s.io/pod-group-fast-admission": "true",
        "kueue.x-k8s.io/pod-group-serving": "true",
        "kueue.x-k8s.io/role-hash": "main",
    }
    assert group_key_of_pod(placed) == "podgroup/ns/statefulset-sts-d8800"
    assert place_pod(sts, placed) is None, "placed once"


def test_pods_it_does_not_hold_are_not_placed() -> None:
    sts = queued(3)
    assert place_pod(sts, sts_pod(gated=False)) is None
    stranger = sts_pod()
    stranger["metadata"]["ownerReferences"][0]["name"] = "other"
    assert place_pod(sts, stranger) is None
    unmarked = sts_pod()
    del unmarked["metadata"]["annotations"]
    assert place_pod(sts, unmarked) is None


def test_a_pod_in_the_group_follows_the_statefulsets_new_queue_name() -> None:
    placed = place_pod(queued(1, "first"), sts_pod(queue="first"))
    assert placed is not None
    moved = place_pod(queued(1, "second"), placed)
    assert moved is not None
    assert objects.queue_name(moved) == "second"
    assert place_pod(queued(0, "second"), placed) is None, "not while scaled to zero"


def test_the_group_waits_for_the_workload_made_from_the_statefulset() -> None:
    sts = queued(3)
    placed = place_pod(sts, sts_pod())
    assert placed is not None
    assert next_group_action([placed], None, flavors={}) is None, "never made from the pods"


def test_a_queued_statefulset_gets_its_workload_and_its_pods_placed() -> None:
    sts = queued(3)
    actions = next_replica_actions(STATEFULSET, sts, [], [sts_pod()])
    assert [type(a) for a in actions] == [CreateWorkload, PlacePods]


def unqueued(replicas: int = 3) -> dict[str, Any]:
    """A StatefulSet naming no queue, as stored after the webhook marked it
    (manageJobsWithoutQueueName)."""
    built = stateful_set("sts", "ns", replicas).uid("sts-uid").image("i")
    return STATEFULSET.propagate(built.build())


def unqueued_pod() -> dict[str, Any]:
    made = sts_pod()
    del made["metadata"]["labels"][QUEUE]
    return made


def test_without_queue_name_a_marked_statefulset_gets_a_workload_naming_no_queue() -> None:
    sts = unqueued(3)
    assert SUSPENDING_PARENT in sts["spec"]["template"]["metadata"]["annotations"]
    assert QUEUE not in sts["spec"]["template"]["metadata"].get("labels", {})
    assert next_replica_actions(STATEFULSET, sts, [], [unqueued_pod()]) == [], "setting off"

    actions = next_replica_actions(STATEFULSET, sts, [], [unqueued_pod()], without_queue_name=True)
    assert [type(a) for a in actions] == [CreateWorkload, PlacePods]
    made = actions[0].workload  # type: ignore[union-attr]
    assert objects.name(made) == "statefulset-sts-d8800"
    assert "queueName" not in made["spec"], "it waits, pending, until the StatefulSet names one"
    [(_, placed)] = actions[1].pods  # type: ignore[union-attr]
    assert QUEUE not in placed["metadata"]["labels"]
    assert placed["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-name"] == objects.name(made)

    # The StatefulSet gets a queue name: the Workload and the pod in the group follow it.
    named = {**sts, "metadata": {**sts["metadata"], "labels": {QUEUE: "main"}}}
    after = next_replica_actions(STATEFULSET, named, [made], [placed], without_queue_name=True)
    assert [type(a) for a in after] == [ReplaceWorkload, PlacePods]
    assert after[0].updated["spec"]["queueName"] == "main"  # type: ignore[union-attr]
    [(_, moved)] = after[1].pods  # type: ignore[union-attr]
    assert objects.queue_name(moved) == "main"


def test_without_queue_name_an_unmarked_statefulset_is_left_alone() -> None:
    # Made where the webhook does not manage it (kube-system), or before kuota ran.
    plain = stateful_set("sts", "kube-system", 2).uid("sts-uid").image("i").build()
    assert next_replica_actions(STATEFULSET, plain, [], [], without_queue_name=True) == []


def test_scaled_to_zero_an_admitted_workload_is_held_never_deleted() -> None:
    wl = admitted_workload(queued(3))
    actions = next_replica_actions(STATEFULSET, queued(0), [wl], [])
    assert actions == [HoldWorkload(wl, "StatefulSet scaled to zero; workload on hold")]
    held = {**wl, "status": on_hold_status(wl, actions[0].message, NOW)}  # type: ignore[union-attr]
    assert objects.is_on_hold(held)
    assert not objects.has_quota_reservation(held)
    assert objects.condition(held, "Admitted")["status"] == "False"  # type: ignore[index]
    assert next_replica_actions(STATEFULSET, queued(0), [held], []) == [], "held once"


def test_a_deactivated_or_finished_workload_is_not_held() -> None:
    wl = admitted_workload(queued(3))
    inactive = {**wl, "spec": {**wl["spec"], "active": False}}
    assert next_replica_actions(STATEFULSET, queued(0), [inactive], []) == []
    done = workload("x", "ns").reserve_quota("cq").finished().build()
    finished = {**wl, "status": done["status"]}
    assert next_replica_actions(STATEFULSET, queued(0), [finished], []) == []


def test_scaled_up_again_the_hold_comes_off() -> None:
    wl = admitted_workload(queued(3))
    held = {**wl, "status": on_hold_status(wl, "on hold", NOW)}
    actions = next_replica_actions(STATEFULSET, queued(3), [held], [])
    assert actions == [ReleaseHold(held)]
    released = {**held, "status": off_hold_status(held, NOW)}
    assert not objects.is_on_hold(released)
    assert objects.condition(released, "QuotaReserved")["reason"] == "PendingEvaluation"  # type: ignore[index]


def test_a_new_queue_name_reaches_the_workload_while_it_has_replicas() -> None:
    made = STATEFULSET.replica_workloads(queued(1, "first"))
    [wl] = made.values()
    [action] = next_replica_actions(STATEFULSET, queued(1, "second"), [wl], [])
    assert isinstance(action, ReplaceWorkload)
    assert action.updated["spec"]["queueName"] == "second"
    assert next_replica_actions(STATEFULSET, queued(0, "second"), [wl], []) == []


def rules(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f"{item.rule} {item.field}" for item in validate_statefulset(new, old, managed=True)]


def with_status(sts: dict[str, Any], **status: int) -> dict[str, Any]:
    return {**sts, "status": status}


def test_the_queue_name_may_change_only_while_no_replica_is_ready() -> None:
    waiting = with_status(queued(3, "first"), readyReplicas=0)
    assert rules(queued(3, "second"), waiting) == []
    running = with_status(queued(3, "first"), readyReplicas=1)
    assert rules(queued(3, "second"), running) == [
        "STS-U1 metadata.labels[kueue.x-k8s.io/queue-name]"
    ]
    unqueued = stateful_set("sts", "ns", 3).uid("sts-uid").image("i").build()
    unqueued["spec"]["template"] = waiting["spec"]["template"]
    assert rules(unqueued, waiting) == ["STS-U1 metadata.labels[kueue.x-k8s.io/queue-name]"]


def test_replicas_change_only_to_or_from_zero_and_scale_up_waits_for_the_scale_down() -> None:
    assert rules(queued(0), queued(3)) == []
    assert rules(queued(2), queued(0)) == []
    assert rules(queued(4), queued(3)) == ["STS-U3 spec.replicas"]
    assert rules(with_status(queued(3), replicas=1), queued(0)) == ["STS-U4 spec.replicas"]


def test_the_pod_template_keeps_what_decides_admission() -> None:
    old = queued(3)
    image = queued(3)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    assert rules(image, old) == [], "the image decides nothing"
    bigger = queued(3)
    bigger["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    assert rules(bigger, old) == ["STS-U2 spec.template.spec.nodeSelector"]


def test_another_frameworks_statefulset_is_not_judged() -> None:
    old = stateful_set("sts", "ns", 3).uid("u").queue("q").build()
    old["spec"]["template"]["metadata"]["annotations"] = {SUSPENDING_PARENT: "lws"}
    new = {**old, "spec": {**old["spec"], "replicas": 5}}
    assert validate_statefulset(new, with_status(old, readyReplicas=3), managed=True) == []


def test_a_topology_annotation_on_the_template_reaches_the_pod_set() -> None:
    sts = queued(3)
    sts["spec"]["template"]["metadata"]["annotations"][
        "kueue.x-k8s.io/podset-required-topology"
    ] = "cloud.provider.com/topology-block"
    [pod_set] = STATEFULSET.replica_workloads(sts)["statefulset-sts-d8800"]["spec"]["podSets"]
    assert pod_set["topologyRequest"] == {
        "required": "cloud.provider.com/topology-block",
        "podIndexLabel": "apps.kubernetes.io/pod-index",
    }


def test_a_marked_template_is_never_changed_again() -> None:
    """Labelling an unqueued StatefulSet with a queue makes no new revision: its pods, waiting
    gated, would never be rolled over to it."""
    sts = unqueued(3)
    named = {**sts, "metadata": {**sts["metadata"], "labels": {QUEUE: "main"}}}
    assert STATEFULSET.propagate(named)["spec"]["template"] == sts["spec"]["template"]
