"""Which of an elastic job's Workloads decides it, and which of its pods may start
(docs/concepts.md#elastic-jobs)."""

from __future__ import annotations

from typing import Any

from scheduler.jobs.elastic import choose_slices, pods_to_ungate, without_elastic_gate

REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"
GATE = {"name": "kueue.x-k8s.io/elastic-job"}


def slice_(
    name: str,
    created: int,
    *,
    replaces: str | None = None,
    quota: bool = False,
    finished: bool = False,
    evicted: bool = False,
    count: int = 2,
) -> dict[str, Any]:
    conditions = []
    if quota:
        conditions += [
            {"type": "QuotaReserved", "status": "True"},
            {"type": "Admitted", "status": "True"},
        ]
    if finished:
        conditions.append({"type": "Finished", "status": "True"})
    if evicted:
        conditions.append({"type": "Evicted", "status": "True"})
    workload: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "ml",
            "creationTimestamp": f"2026-01-01T00:00:{created:02d}Z",
            "annotations": {
                "kueue.x-k8s.io/elastic-job": "true",
                **({REPLACES: replaces} if replaces else {}),
            },
        },
        "spec": {"podSets": [{"name": "main", "count": count}]},
        "status": {"conditions": conditions},
    }
    if quota:
        workload["status"]["admission"] = {
            "clusterQueue": "cq",
            "podSetAssignments": [{"name": "main", "count": count, "flavors": {"cpu": "f"}}],
        }
    return workload


def names(found: Any) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    return (
        found.current and found.current["metadata"]["name"],
        found.pending and found.pending["metadata"]["name"],
        [(w["metadata"]["name"], reason) for w, reason, _ in found.stale],
    )


def test_one_workload_decides_alone() -> None:
    assert names(choose_slices([slice_("a", 1, quota=True)])) == ("a", None, [])


def test_a_new_slice_without_quota_waits_beside_the_admitted_one() -> None:
    found = choose_slices([slice_("b", 2, replaces="ml/a"), slice_("a", 1, quota=True)])
    assert names(found) == ("a", "b", [])


def test_once_the_new_slice_holds_quota_it_decides_and_the_old_one_is_left_over() -> None:
    found = choose_slices(
        [slice_("a", 1, quota=True), slice_("b", 2, replaces="ml/a", quota=True, count=3)]
    )
    assert names(found) == ("b", None, [("a", "WorkloadSliceReplaced")])


def test_finished_slices_are_history() -> None:
    found = choose_slices(
        [slice_("a", 1, quota=True, finished=True), slice_("b", 2, replaces="ml/a", quota=True)]
    )
    assert names(found) == ("b", None, [])


def test_without_quota_anywhere_the_original_decides_and_its_replacement_waits() -> None:
    found = choose_slices([slice_("a", 1), slice_("b", 2, replaces="ml/a")])
    assert names(found) == ("a", "b", [])


def test_an_unrelated_leftover_is_out_of_sync() -> None:
    found = choose_slices([slice_("a", 1, quota=True), slice_("x", 3)])
    assert names(found) == ("a", None, [("x", "OutOfSync")])


def pod(name: str, created: int, *, gated: bool) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ml",
            "creationTimestamp": f"2026-01-01T00:01:{created:02d}Z",
            "labels": {"kueue.x-k8s.io/podset": "main"},
        },
        "spec": {"schedulingGates": [GATE]} if gated else {},
    }


def test_gated_pods_start_up_to_the_admitted_count_oldest_first() -> None:
    admitted = slice_("b", 2, quota=True, count=3)
    gated = [pod("p4", 4, gated=True), pod("p3", 3, gated=True)]
    chosen = pods_to_ungate(admitted, gated, {"main": 2})
    assert [p["metadata"]["name"] for p in chosen] == ["p3"]


def test_a_scaled_down_slice_has_room_for_the_pods_it_asks_for_only() -> None:
    """Its admission says 4 pods; its spec, lowered in place, 2: the 3rd pod waits."""
    admitted = slice_("a", 1, quota=True, count=4)
    admitted["spec"]["podSets"][0]["count"] = 2
    assert pods_to_ungate(admitted, [pod("p3", 3, gated=True)], {"main": 2}) == []


def test_no_pod_starts_before_the_slice_is_admitted_or_while_it_is_evicted() -> None:
    gated = [pod("p1", 1, gated=True)]
    assert pods_to_ungate(slice_("a", 1), gated, {}) == []
    assert pods_to_ungate(slice_("a", 1, quota=True, evicted=True), gated, {}) == []


def test_lifting_the_gate_keeps_the_other_gates() -> None:
    gated = pod("p1", 1, gated=True)
    gated["spec"]["schedulingGates"].append({"name": "kueue.x-k8s.io/topology"})
    assert without_elastic_gate(gated)["spec"]["schedulingGates"] == [
        {"name": "kueue.x-k8s.io/topology"}
    ]
    assert "schedulingGates" not in without_elastic_gate(pod("p2", 2, gated=True))["spec"]
