"""Sample objects on which each CEL rule of kuota's CRDs (Workload, LocalQueue,
AdmissionCheck) and its Python twin must agree
(docs/validation.md#rules-enforced-by-the-api-server).

A sample is a create, a status write (``status``, after ``old_status``), or an
update of the object itself (``update_spec``: spec fields changed after
``old_status`` was written).

Each sample names the twin rules that must fire on it, and no other rule of the
CEL twins.  tests/api/test_cel_twins.py holds the Python twins to that;
e2e/test_crd_cel.py holds the real API server's CEL rules to the same
fields and messages.  A status sample is written through ``workloads/status``
(the API server drops the status of a create).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.builders.kueue import admission_check, local_queue
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
    """The status written before ``status`` or ``update_spec`` (the old object's)."""
    update_spec: dict[str, Any] | None = None
    """Spec fields set (``None``: removed) by an update of the Workload."""
    history: tuple[dict[str, Any], ...] = ()
    """Statuses written before ``old_status``, on a cluster, to reach it by valid steps."""

    @property
    def plural(self) -> str:
        return PLURALS[self.object["kind"]]

    @property
    def namespaced(self) -> bool:
        return self.object["kind"] != "AdmissionCheck"

    def old(self) -> dict[str, Any]:
        """The object before the status write or the update."""
        return {**self.object, "status": self.old_status} if self.old_status else self.object

    def new(self) -> dict[str, Any]:
        """The object the status write or the update asks for."""
        if self.status is not None:
            return {**self.object, "status": self.status}
        old = self.old()
        spec = {**old["spec"], **(self.update_spec or {})}
        return {**old, "spec": {key: value for key, value in spec.items() if value is not None}}


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


def _held(name: str, *, admitted: bool = False, **spec: Any) -> workload:
    built = _wl(name).pod_set(count=2, cpu="1").spec(**spec).reserve_quota("cq")
    return built.admitted() if admitted else built


def _update(
    name: str,
    fires: frozenset[str],
    change: dict[str, Any],
    *,
    admitted: bool = False,
    **spec: Any,
) -> Sample:
    """``change`` to the spec of a Workload that holds a quota reservation (and is admitted)."""
    held = _held(name, admitted=admitted, **spec).build()
    status = held.pop("status")
    return Sample(name, held, fires, old_status=status, update_spec=change)


PC = ("scheduling.k8s.io", "PriorityClass")
UPDATES: tuple[Sample, ...] = (
    _update("reserved-queue-change", frozenset({"WL-52"}), {"queueName": "other"}),
    _update("reserved-queue-kept", frozenset(), {"active": True}),
    _update(
        "reserved-ref-added",
        frozenset({"WL-53"}),
        {"priorityClassRef": _ref(*WPC, "high"), "priority": 5},
    ),  # fmt: skip
    _update(
        "reserved-ref-group-changed",
        frozenset({"WL-54"}),
        {"priorityClassRef": _ref(*PC, "high")},
        priorityClassRef=_ref(*WPC, "high"),
        priority=5,
    ),  # fmt: skip
    _update(
        "reserved-pc-name-changed",
        frozenset({"WL-55"}),
        {"priorityClassRef": _ref(*PC, "low")},
        priorityClassRef=_ref(*PC, "high"),
        priority=5,
    ),  # fmt: skip
    _update(
        "reserved-wpc-name-changed",
        frozenset(),
        {"priorityClassRef": _ref(*WPC, "low")},
        priorityClassRef=_ref(*WPC, "high"),
        priority=5,
    ),  # fmt: skip
    _update(
        "admitted-execution-time-changed",
        frozenset({"WL-56"}),
        {"maximumExecutionTimeSeconds": 60},
        admitted=True,
        maximumExecutionTimeSeconds=30,
    ),  # fmt: skip
    _update(
        "reserved-execution-time-changed",
        frozenset(),
        {"maximumExecutionTimeSeconds": 60},
        maximumExecutionTimeSeconds=30,
    ),  # fmt: skip
    Sample(
        "status-cluster-name-changed",
        _with_spec("status-cluster-name-changed"),
        frozenset({"WL-60"}),
        status={"clusterName": "worker-2"},
        old_status={"clusterName": "worker-1"},
        history=({"nominatedClusterNames": ["worker-1"]},),
    ),
)
CONTROLLER = "kueue.x-k8s.io/multikueue"
OTHER_KINDS: tuple[Sample, ...] = (
    Sample("lq-valid", local_queue("lq-valid").cluster_queue("team.cq-1").build()),
    Sample(
        "lq-bad-cluster-queue",
        local_queue("lq-bad").cluster_queue("Team_CQ").build(),
        frozenset({"LQ-1"}),
    ),
    Sample(
        "lq-cluster-queue-changed",
        local_queue("lq-changed").cluster_queue("cq-a").build(),
        frozenset({"LQ-2"}),
        update_spec={"clusterQueue": "cq-b"},
    ),
    Sample(
        "lq-cluster-queue-cleared",
        local_queue("lq-cleared").cluster_queue("cq-a").build(),
        frozenset({"LQ-2"}),
        update_spec={"clusterQueue": None},
    ),
    Sample(
        "lq-cluster-queue-set-late",
        local_queue("lq-late").build(),
        update_spec={"clusterQueue": "cq-a"},
    ),
    Sample("ac-valid", admission_check("ac-valid", CONTROLLER).build()),
    Sample("ac-empty-controller", admission_check("ac-empty", "").build(), frozenset({"AC-1"})),
    Sample(
        "ac-long-controller", admission_check("ac-long", "c" * 254).build(), frozenset({"AC-1"})
    ),
    Sample(
        "ac-controller-changed",
        admission_check("ac-changed", CONTROLLER).build(),
        frozenset({"AC-2"}),
        update_spec={"controllerName": "example.com/other"},
    ),
)
SAMPLES = SAMPLES + UPDATES + OTHER_KINDS
PLURALS = {
    "Workload": "workloads",
    "LocalQueue": "localqueues",
    "AdmissionCheck": "admissionchecks",
}

CEL_TWINS = frozenset(
    {"WL-1", "WL-3", "WL-6", "WL-7", "WL-8", "WL-9", "WL-14", "WL-15", "WL-16", "WL-17"}
    | {"WL-18", "WL-19", "WL-40", "WL-52", "WL-53", "WL-54", "WL-55", "WL-56", "WL-60"}
    | {"LQ-1", "LQ-2", "AC-1", "AC-2"}
)
