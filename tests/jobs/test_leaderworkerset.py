"""The LeaderWorkerSet integration: its replicas' Workloads, its pods' groups, its rules."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from scheduler.api.pipeline import review
from scheduler.jobs import (
    AdmissionFacts,
    JobIntegration,
    QueuedThroughPods,
    ReplicaGroups,
    by_framework,
    capability,
)
from scheduler.jobs.actions import CreateWorkload
from scheduler.jobs.leaderworkerset import LEADER_WORKER_SET
from scheduler.jobs.leaderworkerset.replicas import group_workload_name, place_pod
from scheduler.jobs.pod.group import next_group_action
from scheduler.jobs.replica_groups import (
    PlacePods,
    RemoveWorkload,
    ReplaceWorkload,
    next_replica_actions,
)
from scheduler.jobs.workload_from_job import PriorityClasses
from tests.builders import leader_worker_set, pod

FRAMEWORK = "leaderworkerset.x-k8s.io/leaderworkerset"
SUSPENDING_PARENT = "kueue.x-k8s.io/pod-suspending-parent"
GATE = {"name": "kueue.x-k8s.io/admission"}


def kueue_name(lws_name: str, uid: str, index: int) -> str:
    """Kueue's GetWorkloadName for a LeaderWorkerSet group, written out."""
    owner = f"{lws_name}-{index}"
    digest = hashlib.sha1(f"LeaderWorkerSet\nleaderworkerset.x-k8s.io\n{owner}\n{uid}".encode())
    return f"leaderworkerset-{owner}-{digest.hexdigest()[:5]}"


def queued(name: str = "lws") -> leader_worker_set:
    return leader_worker_set(name, "ns").uid("lws-uid").queue("user-queue")


def marked(lws: leader_worker_set) -> dict[str, Any]:
    """The LeaderWorkerSet as kuota's webhook leaves it."""
    return LEADER_WORKER_SET.propagate(lws.build())


def lws_pod(name: str, *, group: str | None, leader: str | None = None) -> dict[str, Any]:
    """A pod the LeaderWorkerSet controller made from a marked template, gated by the webhook."""
    built = (
        pod(name, "ns")
        .uid(f"{name}-uid")
        .queue("user-queue")
        .labels({"leaderworkerset.sigs.k8s.io/name": "lws"})
        .annotations({SUSPENDING_PARENT: FRAMEWORK})
        .pod_spec(schedulingGates=[GATE])
    )
    if group is not None:
        built.labels({"leaderworkerset.sigs.k8s.io/group-index": group})
    if leader is not None:
        built.annotations({"leaderworkerset.sigs.k8s.io/leader-name": leader})
    return built.build()


def test_the_kind_is_registered_with_what_it_does() -> None:
    kind = by_framework(FRAMEWORK)
    assert kind is LEADER_WORKER_SET
    assert capability(kind, ReplicaGroups) is not None
    assert capability(kind, QueuedThroughPods) is not None
    assert capability(kind, JobIntegration) is None, "never suspended: no Workload of its own"


def test_the_webhook_marks_both_templates_of_a_queued_one() -> None:
    lws = queued().labels({"kueue.x-k8s.io/priority-class": "high"}).leader_template().build()
    marked_lws = LEADER_WORKER_SET.propagate(lws)
    for name in ("leaderTemplate", "workerTemplate"):
        metadata = marked_lws["spec"]["leaderWorkerTemplate"][name]["metadata"]
        assert metadata["labels"] == {
            "kueue.x-k8s.io/queue-name": "user-queue",
            "kueue.x-k8s.io/priority-class": "high",
        }
        assert metadata["annotations"] == {
            SUSPENDING_PARENT: FRAMEWORK,
            "kueue.x-k8s.io/pod-group-serving": "true",
        }
    assert "metadata" not in lws["spec"]["leaderWorkerTemplate"]["workerTemplate"], "a copy"


@pytest.mark.parametrize(
    ("leader", "size", "want"),
    [
        (False, 1, [("main", 1)]),
        (False, 3, [("main", 3)]),
        (True, 1, [("leader", 1), ("worker", 0)]),
        (True, 4, [("leader", 1), ("worker", 3)]),
    ],
)
def test_pod_sets_are_kueues(leader: bool, size: int, want: list[tuple[str, int]]) -> None:
    lws = queued().size(size).requests(cpu="200m")
    if leader:
        lws.leader_template().requests(cpu="1")
    (workload,) = LEADER_WORKER_SET.replica_workloads(lws.build()).values()
    pod_sets = workload["spec"]["podSets"]
    assert [(p["name"], p["count"]) for p in pod_sets] == want
    if leader:
        requests = [
            p["template"]["spec"]["containers"][0]["resources"]["requests"] for p in pod_sets
        ]
        assert requests == [{"cpu": "1"}, {"cpu": "200m"}]


def test_one_workload_per_replica_named_and_owned_as_kueue_does() -> None:
    lws = queued().replicas(3).labels({"kueue.x-k8s.io/priority-class": "high"}).build()
    workloads = LEADER_WORKER_SET.replica_workloads(
        lws, priority_classes=PriorityClasses(workload={"high": 1000})
    )
    assert list(workloads) == [kueue_name("lws", "lws-uid", i) for i in range(3)]
    for index, (name, workload) in enumerate(workloads.items()):
        meta = workload["metadata"]
        assert meta["name"] == name and meta["namespace"] == "ns"
        assert meta["labels"] == {"kueue.x-k8s.io/job-uid": "lws-uid"}
        assert meta["annotations"] == {
            "kueue.x-k8s.io/is-group-workload": "true",
            "kueue.x-k8s.io/job-owner-gvk": "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet",
            "kueue.x-k8s.io/job-owner-name": "lws",
            "kueue.x-k8s.io/component-workload-index": str(index),
        }
        (owner,) = meta["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
            "LeaderWorkerSet",
            "lws",
            "lws-uid",
            True,
        )
        assert workload["spec"]["queueName"] == "user-queue"
        assert workload["spec"]["priority"] == 1000
        assert workload["spec"]["priorityClassRef"]["name"] == "high"


def test_the_controllers_own_template_keys_stay_out_of_the_pod_sets() -> None:
    lws = queued().template_labels(
        {
            "leaderworkerset.sigs.k8s.io/name": "lws",
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
            "app": "x",
        }
    )
    lws.template_annotations({"leaderworkerset.sigs.k8s.io/size": "1", "note": "kept"})
    (workload,) = LEADER_WORKER_SET.replica_workloads(lws.build()).values()
    metadata = workload["spec"]["podSets"][0]["template"]["metadata"]
    assert metadata["labels"] == {"leaderworkerset.sigs.k8s.io/name": "lws", "app": "x"}
    assert metadata["annotations"] == {"note": "kept"}


def test_a_surging_rolling_update_keeps_workloads_for_the_extra_replicas() -> None:
    lws = queued().replicas(2).build()
    lws["spec"]["rolloutStrategy"] = {"rollingUpdateConfiguration": {"maxSurge": 1}}
    lws["status"] = {"replicas": 3, "updatedReplicas": 1}
    assert len(LEADER_WORKER_SET.replica_workloads(lws)) == 3
    lws["status"]["updatedReplicas"] = 2  # done: back to the spec's count
    assert len(LEADER_WORKER_SET.replica_workloads(lws)) == 2


@pytest.mark.parametrize(
    ("leader_template", "leader_name", "role"),
    [(False, None, "main"), (True, None, "leader"), (True, "lws-0", "worker")],
)
def test_a_gated_pod_joins_its_groups_workload(
    leader_template: bool, leader_name: str | None, role: str
) -> None:
    lws = queued().size(3)
    if leader_template:
        lws.leader_template()
    placed = place_pod(marked(lws), lws_pod("lws-0-1", group="1", leader=leader_name))
    assert placed is not None
    group = kueue_name("lws", "lws-uid", 1)
    assert placed["metadata"]["labels"]["kueue.x-k8s.io/managed"] == "true"
    assert placed["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
    annotations = placed["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/pod-group-name"] == group
    assert annotations["kueue.x-k8s.io/prebuilt-workload-name"] == group
    assert annotations["kueue.x-k8s.io/pod-group-total-count"] == "3"
    assert annotations["kueue.x-k8s.io/role-hash"] == role
    assert placed["spec"]["schedulingGates"] == [GATE], "still gated: its group is not admitted"


def test_pods_not_ready_to_join_are_left_alone() -> None:
    lws = marked(queued())
    assert place_pod(lws, lws_pod("lws-0", group=None)) is None, "no group index yet"
    not_gated = lws_pod("lws-0", group="0")
    not_gated["spec"].pop("schedulingGates")
    assert place_pod(lws, not_gated) is None
    other = lws_pod("lws-0", group="0")
    other["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/name"] = "other"
    assert place_pod(lws, other) is None
    unmarked = lws_pod("lws-0", group="0")
    del unmarked["metadata"]["annotations"][SUSPENDING_PARENT]
    assert place_pod(lws, unmarked) is None


def test_the_decision_creates_missing_workloads_and_places_waiting_pods() -> None:
    lws = marked(queued().replicas(2))
    waiting = [lws_pod("lws-0", group="0"), lws_pod("lws-1", group=None)]
    actions = next_replica_actions(LEADER_WORKER_SET, lws, [], waiting)
    created = [a.workload["metadata"]["name"] for a in actions if isinstance(a, CreateWorkload)]
    assert created == [group_workload_name(lws, 0), group_workload_name(lws, 1)]
    (place,) = [a for a in actions if isinstance(a, PlacePods)]
    assert [old["metadata"]["name"] for old, _ in place.pods] == ["lws-0"]


def test_scaling_down_removes_the_workloads_of_the_replicas_that_went() -> None:
    lws = marked(queued().replicas(3))
    existing = list(LEADER_WORKER_SET.replica_workloads(lws).values())
    smaller = marked(queued().replicas(1))
    actions = next_replica_actions(LEADER_WORKER_SET, smaller, existing, [])
    assert [a.workload["metadata"]["name"] for a in actions if isinstance(a, RemoveWorkload)] == [
        group_workload_name(lws, 1),
        group_workload_name(lws, 2),
    ]
    assert not [a for a in actions if isinstance(a, CreateWorkload)]


def test_a_changed_queue_name_is_carried_to_its_workloads() -> None:
    existing = list(LEADER_WORKER_SET.replica_workloads(marked(queued())).values())
    moved = marked(queued().queue("other"))
    (action,) = next_replica_actions(LEADER_WORKER_SET, moved, existing, [])
    assert isinstance(action, ReplaceWorkload)
    assert action.updated["spec"]["queueName"] == "other"
    assert action.updated["spec"]["podSets"] == existing[0]["spec"]["podSets"]
    assert "queue name user-queue -> other" in action.difference


def test_an_unqueued_or_deleted_one_is_left_alone() -> None:
    unqueued = leader_worker_set("lws", "ns").uid("lws-uid").build()
    assert next_replica_actions(LEADER_WORKER_SET, unqueued, [], []) == []
    deleting = queued().build()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert next_replica_actions(LEADER_WORKER_SET, deleting, [], []) == []


def test_a_group_naming_its_workload_never_makes_one_from_its_pods() -> None:
    lws = marked(queued())
    members = [place_pod(lws, lws_pod("lws-0", group="0"))]
    assert members[0] is not None
    assert next_group_action(members, None, flavors={}) is None


# -- rules ---------------------------------------------------------------------------------


def rules(new: dict[str, Any], old: dict[str, Any] | None = None, **facts: bool) -> list[str]:
    given = AdmissionFacts(**facts)
    errors = (
        LEADER_WORKER_SET.validate_create(new, facts=given)
        if old is None
        else LEADER_WORKER_SET.validate_update(new, old, facts=given)
    )
    return [f"{e.rule} {e.field}" for e in errors]


def test_create_rules() -> None:
    assert rules(queued().build()) == []
    assert rules(queued().queue("Bad_Name").build()) == [
        "JOB-1 metadata.labels[kueue.x-k8s.io/queue-name]"
    ]
    assert rules(queued().replicas(-1).build()) == ["LWS-1 spec.replicas"]
    assert rules(queued().replicas(1_000_001).build()) == ["LWS-1 spec.replicas"]


def test_the_queue_name_is_fixed_once_a_group_is_ready_and_never_removed() -> None:
    waiting, ready = queued().ready_replicas(0), queued().ready_replicas(1)
    assert rules(queued().queue("other").build(), waiting.build()) == []
    assert rules(queued().queue("other").build(), ready.build()) == [
        "LWS-U1 metadata.labels[kueue.x-k8s.io/queue-name]"
    ]
    unqueued = leader_worker_set("lws", "ns").uid("lws-uid").build()
    assert rules(unqueued, waiting.build()) == ["LWS-U1 metadata.labels[kueue.x-k8s.io/queue-name]"]


def test_a_priority_class_is_not_added_to_a_running_one_nor_removed() -> None:
    high = {"kueue.x-k8s.io/priority-class": "high"}
    ready = queued().ready_replicas(1)
    assert rules(queued().labels(high).build(), ready.build()) == [
        "JOB-U3 metadata.labels[kueue.x-k8s.io/priority-class]"
    ]
    assert rules(queued().labels(high).build(), queued().build()) == []
    assert rules(queued().build(), queued().labels(high).build()) == [
        "JOB-U4 metadata.labels[kueue.x-k8s.io/priority-class]"
    ]


def test_what_its_workloads_were_made_from_stays_while_managed() -> None:
    old = queued().size(2).requests(cpu="1").build()
    new_image = queued().size(2).requests(cpu="1").image("other").build()
    assert rules(new_image, old, managed=True) == [], "only admission fields are frozen"
    more_cpu = queued().size(2).requests(cpu="2").build()
    assert rules(more_cpu, old, managed=True) == [
        "LWS-U2 spec.leaderWorkerTemplate.workerTemplate.spec.containers"
    ]
    bigger = queued().size(3).requests(cpu="1").build()
    assert rules(bigger, old, managed=True) == ["LWS-U3 spec.leaderWorkerTemplate.size"]
    with_leader = queued().size(2).requests(cpu="1").leader_template().build()
    assert rules(with_leader, old, managed=True) == [
        "LWS-U2 spec.leaderWorkerTemplate.leaderTemplate"
    ]
    unmanaged_old = leader_worker_set("lws", "ns").size(2).build()
    unmanaged_new = leader_worker_set("lws", "ns").size(3).build()
    assert rules(unmanaged_new, unmanaged_old) == [], "not kuota's: its own business"


def test_kuota_validate_reviews_a_leaderworkerset_like_the_webhook() -> None:
    result = review(queued().replicas(-2).build())
    assert [e.rule for e in result.errors] == ["LWS-1"]
