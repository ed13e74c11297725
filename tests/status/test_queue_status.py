"""ClusterQueue and LocalQueue status (docs/scheduling.md#queue-status), from engine
state and Workloads: what kubectl shows, written only when it changes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.engine import ClusterQueueStatus
from scheduler.core.fair_share import ZERO, Share
from scheduler.status.queue_status import (
    LQ_BLOCKED,
    LQ_READY,
    cluster_queue_status,
    cohort_status,
    ignored_admission_mode,
    local_queue_status,
)
from tests.builders import assignment, workload

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
Q = Quantity.parse


def state(*, pending: int = 1, admitted: int = 2, active: bool = True) -> ClusterQueueStatus:
    return ClusterQueueStatus(
        name="cq",
        pending=pending,
        admitted=admitted,
        usage={
            "on-demand": {"cpu": Q("9"), "memory": Q("36Gi")},
            "spot": {"cpu": Q("3"), "memory": Q("0")},
        },
        borrowed={
            "on-demand": {"cpu": Q("1"), "memory": Q("0")},
            "spot": {"cpu": Q("0"), "memory": Q("0")},
        },
        active=active,
        active_reason="Ready" if active else "FlavorNotFound",
        active_message="Can admit new workloads"
        if active
        else "Can't admit new workloads: references missing ResourceFlavor(s): spot.",
    )


def test_cluster_queue_status_has_counts_quantities_and_the_active_condition() -> None:
    status = cluster_queue_status({"metadata": {"name": "cq", "generation": 3}}, state(), NOW)
    assert status is not None
    assert (
        status["pendingWorkloads"],
        status["reservingWorkloads"],
        status["admittedWorkloads"],
    ) == (1, 2, 2)
    assert status["flavorsReservation"][0] == {
        "name": "on-demand",
        "resources": [
            {"name": "cpu", "total": "9", "borrowed": "1"},
            {"name": "memory", "total": "36Gi", "borrowed": "0"},
        ],
    }
    active = status["conditions"][0]
    assert (active["type"], active["status"], active["message"], active["observedGeneration"]) == (
        "Active",
        "True",
        "Can admit new workloads",
        3,
    )


def test_cluster_queue_status_is_not_rewritten_when_unchanged_and_says_what_is_missing() -> None:
    queue: dict[str, Any] = {"metadata": {"name": "cq"}}
    queue["status"] = cluster_queue_status(queue, state(), NOW)
    assert cluster_queue_status(queue, state(), NOW) is None
    inactive = cluster_queue_status(queue, state(active=False), NOW)
    assert inactive is not None
    assert inactive["conditions"][0]["message"] == (
        "Can't admit new workloads: references missing ResourceFlavor(s): spot."
    )


def share(value: Fraction) -> Share:
    return Share(borrowing=True, unweighted=value, infinite=False, value=value)


def test_fair_sharing_status_follows_the_share_and_goes_when_fair_sharing_is_off() -> None:
    queue: dict[str, Any] = {"metadata": {"name": "cq"}}
    queue["status"] = cluster_queue_status(queue, replace(state(), share=ZERO), NOW)
    assert queue["status"]["fairSharing"] == {"weightedShare": 0}
    assert cluster_queue_status(queue, replace(state(), share=ZERO), NOW) is None
    borrowing = cluster_queue_status(queue, replace(state(), share=share(Fraction(499, 2))), NOW)
    assert borrowing is not None and borrowing["fairSharing"] == {"weightedShare": 250}
    off = cluster_queue_status(queue, state(), NOW)
    assert off is not None and "fairSharing" not in off


def test_cohort_status_is_written_only_when_the_share_changes() -> None:
    cohort: dict[str, Any] = {"metadata": {"name": "c"}}
    assert cohort_status(cohort, None) is None
    cohort["status"] = cohort_status(cohort, ZERO)
    assert cohort["status"] == {"fairSharing": {"weightedShare": 0}}
    assert cohort_status(cohort, ZERO) is None
    assert cohort_status(cohort, share(Fraction(400))) == {"fairSharing": {"weightedShare": 400}}
    assert cohort_status(cohort, None) == {}


def queued() -> workload:
    """Workload ``w`` in ``ns`` of LocalQueue ``lq``, as a list returns it (spec: the queue)."""
    return workload("w", "ns").as_written().unset("spec.podSets").queue("lq")


def holding(cpu: str) -> workload:
    """``queued()`` holding ``cpu`` of on-demand in ClusterQueue ``cq`` (QuotaReserved only)."""
    return (
        queued()
        .condition("QuotaReserved", reason=None, message=None, at=None)
        .admission("cq", assignment({"cpu": "on-demand"}, {"cpu": cpu}, count=None))
    )


def test_local_queue_status_counts_its_own_workloads() -> None:
    queue = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}
    status = local_queue_status(
        queue,
        [
            holding("2").listed(),
            holding("500m").listed(),
            queued().listed(),
        ],
        cluster_queue=state(),
        now=NOW,
    )
    assert status is not None
    assert (status["pendingWorkloads"], status["admittedWorkloads"]) == (1, 2)
    on_demand = next(f for f in status["flavorsUsage"] if f["name"] == "on-demand")
    assert {r["name"]: r["total"] for r in on_demand["resources"]} == {
        "cpu": "2500m",
        "memory": "0",
    }
    assert status["conditions"][0]["message"] == LQ_READY


def test_local_queue_status_explains_a_missing_or_stopped_cluster_queue() -> None:
    queue = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "gone"}}
    missing = local_queue_status(queue, [], cluster_queue=None, now=NOW)
    assert missing is not None and missing["conditions"][0]["reason"] == "ClusterQueueDoesNotExist"
    assert missing["conditions"][0]["message"] == LQ_BLOCKED
    stopped = local_queue_status(
        {**queue, "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}},
        [queued().listed()],
        cluster_queue=state(),
        now=NOW,
    )
    assert stopped is not None and stopped["pendingWorkloads"] == 0
    assert stopped["conditions"][0]["reason"] == "Stopped"


def test_queues_count_a_workload_waiting_for_admission_checks_as_reserving_only() -> None:
    waiting = holding("500m").listed()
    waiting["status"]["admissionChecks"] = [{"name": "prov", "state": "Pending"}]
    queue = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}
    status = local_queue_status(
        queue, [holding("2").listed(), waiting], cluster_queue=state(), now=NOW
    )
    assert status is not None
    assert (status["reservingWorkloads"], status["admittedWorkloads"]) == (2, 1)

    def cpu(flavors: list[dict[str, Any]]) -> str:
        on_demand = next(f for f in flavors if f["name"] == "on-demand")
        return str(next(r["total"] for r in on_demand["resources"] if r["name"] == "cpu"))

    assert (cpu(status["flavorsReservation"]), cpu(status["flavorsUsage"])) == ("2500m", "2")

    split = ClusterQueueStatus(
        **{
            **{f: getattr(state(), f) for f in ClusterQueueStatus.__dataclass_fields__},
            "reserving": 3,
            "admitted": 2,
            "admitted_usage": {"on-demand": {"cpu": Q("8"), "memory": Q("36Gi")}},
            "admitted_borrowed": {"on-demand": {"cpu": Q("0"), "memory": Q("0")}},
        }
    )
    cq_status = cluster_queue_status({"metadata": {"name": "cq"}}, split, NOW)
    assert cq_status is not None
    assert (cq_status["reservingWorkloads"], cq_status["admittedWorkloads"]) == (3, 2)
    assert (cpu(cq_status["flavorsReservation"]), cpu(cq_status["flavorsUsage"])) == ("9", "8")


def test_local_queue_status_shows_admission_fair_sharing_usage() -> None:
    queue = {"metadata": {"name": "lq", "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}
    usage = ({"cpu": 1_500_000_000, "memory": 1024 * 10**9}, NOW)
    status = local_queue_status(queue, [], cluster_queue=state(), now=NOW, fair_usage=usage)
    assert status is not None
    assert status["fairSharing"] == {
        "weightedShare": 0,
        "admissionFairSharingStatus": {
            "consumedResources": {"cpu": "1500m", "memory": "1024"},
            "lastUpdate": "2026-11-22T12:00:00Z",
        },
    }
    queue["status"] = status
    assert local_queue_status(queue, [], cluster_queue=state(), now=NOW, fair_usage=usage) is None
    # Admission fair sharing off: what the status says stays.
    assert local_queue_status(queue, [], cluster_queue=state(), now=NOW) is None


def test_a_usage_based_admission_mode_without_the_configuration_section_is_reported() -> None:
    queue = {"spec": {"admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}}}
    note = ignored_admission_mode(queue, configured=False)
    assert note is not None and "has no admissionFairSharing section" in note
    assert ignored_admission_mode(queue, configured=True) is None
    plain = {"spec": {"admissionScope": {"admissionMode": "NoAdmissionFairSharing"}}}
    assert ignored_admission_mode(plain, configured=False) is None
    assert ignored_admission_mode({"spec": {}}, configured=False) is None
