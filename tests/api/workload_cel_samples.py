"""Sample Workloads on which each CEL rule of the Workload CRD and its Python twin
must agree (docs/validation.md#rules-enforced-by-the-api-server).

Each sample names the twin rules that must fire on it, and no other rule of the
CEL twins.  tests/api/test_workload_cel.py holds the Python twins to that;
e2e/test_workload_cel.py holds the real API server's CEL rules to the same
fields and messages.  A status sample is written through ``workloads/status``
(the API server drops the status of a create).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.builders.workload import pod_set, workload

GATE_TOO_LONG = "g" * 64


@dataclass(frozen=True)
class Sample:
    name: str
    object: dict[str, Any]
    fires: frozenset[str] = field(default_factory=frozenset)
    status: dict[str, Any] | None = None
    """Written through the status subresource after the Workload is created."""
    old_status: dict[str, Any] | None = None
    """The status written before ``status`` (the old object of that update)."""

    def old(self) -> dict[str, Any]:
        """The object before the status write."""
        return {**self.object, "status": self.old_status} if self.old_status else self.object


def _wl(name: str) -> workload:
    return workload(name).uid(None).created(None).queue("lq")


def _with_spec(name: str, **spec: Any) -> dict[str, Any]:
    return _wl(name).pod_set(count=3, cpu="1").spec(**spec).build()


def _pod_sets(name: str, *items: pod_set) -> dict[str, Any]:
    return _wl(name).pod_sets(*items).build()


def _ref(group: str, kind: str, name: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "name": name}


WPC = ("kueue.x-k8s.io", "WorkloadPriorityClass")

SAMPLES: tuple[Sample, ...] = (
    Sample("plain", _with_spec("plain")),
    Sample(
        "everything-valid",
        _wl("everything-valid")
        .pod_sets(pod_set("a", 4, cpu="1").min_count(2), pod_set("b", 1))
        .queue("team.lq-1")
        .spec(
            priorityClassRef=_ref(*WPC, "high"),
            priority=100,
            maximumExecutionTimeSeconds=600,
            preemptionGates=[{"name": "example.com/gate"}],
        )
        .build(),
    ),
    Sample("no-pod-sets", _with_spec("no-pod-sets", podSets=[]), frozenset({"WL-1"})),
    Sample("bad-pod-set-name", _pod_sets("bad-pod-set-name", pod_set("Main")), frozenset({"WL-3"})),
    Sample("negative-count", _pod_sets("negative-count", pod_set(count=-1)), frozenset({"WL-6"})),
    Sample(
        "min-count-zero",
        _pod_sets("min-count-zero", pod_set(count=3).min_count(0)),
        frozenset({"WL-7"}),
    ),
    Sample(
        "min-count-above-count",
        _pod_sets("min-count-above-count", pod_set(count=3).min_count(5)),
        frozenset({"WL-8"}),
    ),
    Sample(
        "two-min-counts",
        _pod_sets("two-min-counts", pod_set("a", 2).min_count(1), pod_set("b", 2).min_count(1)),
        frozenset({"WL-9"}),
    ),
    Sample(
        "bad-queue-name", _with_spec("bad-queue-name", queueName="Team_A"), frozenset({"WL-14"})
    ),
    Sample(
        "bad-priority-class-name",
        _with_spec("bad-priority-class-name", priorityClassRef=_ref(*WPC, "High!"), priority=1),
        frozenset({"WL-15"}),
    ),
    Sample(
        "kind-not-of-group",
        _with_spec(
            "kind-not-of-group",
            priorityClassRef=_ref("scheduling.k8s.io", "WorkloadPriorityClass", "high"),
            priority=1,
        ),
        frozenset({"WL-16"}),
    ),
    Sample(
        "class-without-priority",
        _with_spec("class-without-priority", priorityClassRef=_ref(*WPC, "high")),
        frozenset({"WL-17"}),
    ),
    Sample(
        "execution-time-zero",
        _with_spec("execution-time-zero", maximumExecutionTimeSeconds=0),
        frozenset({"WL-18"}),
    ),
    Sample(
        "gate-name-too-long",
        _with_spec("gate-name-too-long", preemptionGates=[{"name": GATE_TOO_LONG}]),
        frozenset({"WL-19"}),
    ),
    Sample(
        "several-at-once",
        _wl("several-at-once")
        .pod_sets(pod_set("X", 2).min_count(3))
        .queue("Q")
        .spec(maximumExecutionTimeSeconds=-5)
        .build(),
        frozenset({"WL-3", "WL-8", "WL-14", "WL-18"}),
    ),
    Sample(
        "status-clusters-valid",
        _with_spec("status-clusters-valid"),
        status={"nominatedClusterNames": ["worker-1", "worker-2"]},
    ),  # fmt: skip
    Sample(
        "status-cluster-and-nominated",
        _with_spec("status-cluster-and-nominated"),
        frozenset({"WL-40"}),
        status={"clusterName": "worker-1", "nominatedClusterNames": ["worker-2"]},
        old_status={"nominatedClusterNames": ["worker-1", "worker-2"]},
    ),
)

CEL_TWINS = frozenset(
    {"WL-1", "WL-3", "WL-6", "WL-7", "WL-8", "WL-9", "WL-14", "WL-15", "WL-16", "WL-17"}
    | {"WL-18", "WL-19", "WL-40"}
)
