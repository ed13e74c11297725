"""A Workload's status as the scheduler writes it (scheduler.status.workload_status):
the admission with both conditions, a pending explanation written only when it changes,
a previous eviction cleared on admission."""

from __future__ import annotations

import copy
from datetime import timedelta

from scheduler.core.decisions import Pending
from scheduler.status.workload_status import pending_status
from tests.jobs.sample import NOW, admit, train, workload_for


def test_admitted_status_records_admission_and_both_conditions() -> None:
    status = admit(workload_for(train().build()))["status"]
    assert status["admission"] == {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "spot"}, "resourceUsage": {"cpu": "2"}, "count": 2}
        ],
    }
    by_type = {c["type"]: c for c in status["conditions"]}
    assert by_type["QuotaReserved"]["message"] == "Quota reserved in ClusterQueue cq"
    assert (by_type["Admitted"]["status"], by_type["Admitted"]["reason"]) == ("True", "Admitted")


def test_pending_status_is_written_only_when_it_changes_and_keeps_transition_time() -> None:
    workload = workload_for(train().build())
    waiting = Pending(
        "ml/x", "cq", "WaitingForQuota", "couldn't assign flavors to pod set main: no"
    )
    first = pending_status(workload, waiting, NOW)
    assert first is not None
    reserved = next(c for c in first["conditions"] if c["type"] == "QuotaReserved")
    assert (reserved["status"], reserved["reason"]) == ("False", "WaitingForQuota")
    again = {**workload, "status": first}
    assert pending_status(again, waiting, NOW + timedelta(minutes=1)) is None
    other = Pending("ml/x", "cq", "WaitingForQuota", "a different message")
    second = pending_status(again, other, NOW + timedelta(minutes=1))
    assert second is not None
    changed = next(c for c in second["conditions"] if c["type"] == "QuotaReserved")
    assert changed["lastTransitionTime"] == reserved["lastTransitionTime"], "status did not flip"


def test_admission_clears_a_previous_eviction() -> None:
    workload = workload_for(train().build())
    workload = copy.deepcopy(workload)
    workload["status"] = {
        "conditions": [
            {
                "type": "Evicted",
                "status": "True",
                "reason": "Preempted",
                "message": "Preempted by x",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    status = admit(workload)["status"]
    evicted = next(c for c in status["conditions"] if c["type"] == "Evicted")
    assert (evicted["status"], evicted["message"]) == ("False", "Previously: Preempted by x")
