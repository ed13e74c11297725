"""When an ended Workload, or its job, is due for deletion (objectRetentionPolicies)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from scheduler.jobs.retention import Expiry, deactivated_by_kueue, expiry
from tests.builders import workload
from tests.builders.base import T0, condition

HOUR = timedelta(hours=1)


def finished(at: float = 10) -> dict[str, Any]:
    return workload("w").status(conditions=[condition("Finished", at=at)]).build()


def deactivated(reason: str = "DeactivatedDueToAdmissionCheck", *, reserved: bool = False) -> Any:
    built = workload("w").spec(active=False)
    conditions = [condition("Evicted", reason=reason, at=20)]
    if reserved:
        conditions.append(condition("QuotaReserved", at=5))
        built.status(admission={"clusterQueue": "cq", "podSetAssignments": []})
    return built.status(conditions=conditions).build()


def test_a_finished_workload_is_due_after_its_period() -> None:
    at = T0 + timedelta(seconds=10)
    assert expiry(finished(), after_finished=HOUR, after_deactivated=None) == Expiry(
        at + HOUR, "workload"
    )
    zero = expiry(finished(), after_finished=timedelta(0), after_deactivated=HOUR)
    assert zero == Expiry(at, "workload"), "0 deletes at once"
    assert expiry(finished(), after_finished=None, after_deactivated=HOUR) is None


def test_the_job_of_a_workload_kuota_deactivated_is_due_after_its_period() -> None:
    assert expiry(deactivated(), after_finished=None, after_deactivated=HOUR) == Expiry(
        T0 + timedelta(seconds=20) + HOUR, "job"
    )


@pytest.mark.parametrize(
    ("obj", "why"),
    [
        pytest.param(deactivated("Deactivated"), "deactivated by hand", id="by-hand"),
        pytest.param(deactivated(reserved=True), "still holds quota", id="reserved"),
        pytest.param(
            workload("w").status(conditions=[condition("Evicted", reason="Preempted")]).build(),
            "evicted, still active",
            id="preempted",
        ),
        pytest.param(workload("w").build(), "running", id="pending"),
    ],
)
def test_other_workloads_are_kept(obj: dict[str, Any], why: str) -> None:
    assert expiry(obj, after_finished=HOUR, after_deactivated=timedelta(0)) is None, why


def test_deactivated_by_kueue_means_a_deactivated_due_to_reason() -> None:
    assert deactivated_by_kueue(deactivated("DeactivatedDueToRequeuingLimitExceeded"))
    assert not deactivated_by_kueue(deactivated("Deactivated"))
