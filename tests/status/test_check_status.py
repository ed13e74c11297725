"""Two-phase admission (scheduler.status.check_status) seen from the Workload's status and the
Job (docs/scheduling.md#admission-checks)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduler.api import objects
from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, Evict, PodSetAdmission
from scheduler.jobs.actions import DeactivateWorkload, StartJob
from scheduler.jobs.controller import next_action
from scheduler.status.check_status import (
    checks_admitted_status,
    deactivation,
    deactivation_target_status,
    next_check_step,
    unsupported_check_status,
)
from scheduler.status.conditions import timestamp
from scheduler.status.workload_status import evicted_status, released_status
from tests.jobs.sample import FLAVORS, NOW, train, workload_for


def reserve(workload: dict[str, Any], *checks: str) -> dict[str, Any]:
    from scheduler.status.workload_status import admitted_status

    decision = Admit(
        workload="ml/x",
        cluster_queue="cq",
        pod_sets=(PodSetAdmission("main", 2, {"cpu": "spot"}, {"cpu": Quantity.parse("2")}),),
        message="",
        admission_checks=checks,
    )
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def condition(workload: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in workload["status"]["conditions"] if c["type"] == kind)


def set_state(workload: dict[str, Any], name: str, state: str, **extra: Any) -> dict[str, Any]:
    """What a check controller's status patch does to one entry."""
    entries = [
        {**e, "state": state, "lastTransitionTime": timestamp(NOW), **extra}
        if e["name"] == name
        else e
        for e in workload["status"]["admissionChecks"]
    ]
    return {**workload, "status": {**workload["status"], "admissionChecks": entries}}


def test_reservation_lists_pending_checks_and_admitted_waits() -> None:
    workload = reserve(workload_for(train().build()), "prov", "acc")
    assert [(c["name"], c["state"]) for c in workload["status"]["admissionChecks"]] == [
        ("acc", "Pending"),
        ("prov", "Pending"),
    ]
    assert condition(workload, "QuotaReserved")["status"] == "True"
    admitted = condition(workload, "Admitted")
    assert (admitted["status"], admitted["reason"], admitted["message"]) == (
        "False",
        "UnsatisfiedAdmissionChecks",
        "The workload has not all checks ready",
    )
    assert next_action(train().build(), workload, flavors=FLAVORS) is None, (
        "the Job waits suspended"
    )
    assert next_check_step(workload) is None


def test_every_check_ready_admits_and_the_job_starts_with_the_pod_set_updates() -> None:
    workload = reserve(workload_for(train().build()), "acc")
    update = {
        "name": "main",
        "labels": {"checked": "yes"},
        "annotations": {"note": "n"},
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
    }
    workload = set_state(workload, "acc", "Ready", podSetUpdates=[update])
    step = next_check_step(workload)
    assert step is not None and step.kind == "admit"
    assert next_action(train().build(), workload, flavors=FLAVORS) is None, (
        "not before Admitted=True"
    )
    workload = {**workload, "status": checks_admitted_status(workload, NOW)}
    assert condition(workload, "Admitted")["status"] == "True"
    assert next_check_step(workload) is None
    action = next_action(train().build(), workload, flavors=FLAVORS)
    assert isinstance(action, StartJob)
    template = action.job["spec"]["template"]
    assert template["spec"]["nodeSelector"] == {
        "zone": "a",
        "instance-type": "spot",
        "pool": "gpu",
    }
    assert {"key": "gpu", "operator": "Exists"} in template["spec"]["tolerations"]
    assert template["metadata"]["labels"]["checked"] == "yes"
    assert template["metadata"]["annotations"] == {
        "note": "n",
        "kueue.x-k8s.io/workload": objects.name(workload),
    }


def test_retry_evicts_resets_checks_and_sets_the_backoff() -> None:
    workload = reserve(workload_for(train().build()), "acc")
    workload = set_state(workload, "acc", "Retry", message="later", requeueAfterSeconds=120)
    step = next_check_step(workload)
    assert step is not None and step.kind == "retry"
    assert step.message == 'Evicted due to AdmissionCheck in Retry state: "acc" (later)'
    later = NOW + timedelta(seconds=5)
    evicted = evicted_status(workload, Evict("ml/x", None, "AdmissionCheck", step.message), later)
    assert evicted is not None
    (entry,) = evicted["admissionChecks"]
    assert entry["state"] == "Pending" and entry["retryCount"] == 1
    assert entry["message"] == "Reset to Pending after eviction. Previously: Retry"
    assert evicted["requeueState"]["requeueAt"] == timestamp(NOW + timedelta(seconds=120))
    released = released_status({**workload, "status": evicted}, later)
    assert "admission" not in released
    requeued = next(c for c in released["conditions"] if c["type"] == "Requeued")
    assert (requeued["status"], requeued["reason"]) == ("False", "AdmissionCheck")


def test_rejected_deactivates_with_kueues_reason() -> None:
    workload = reserve(workload_for(train().build()), "acc")
    workload = set_state(workload, "acc", "Rejected", message="no way")
    step = next_check_step(workload)
    assert step is not None and step.kind == "reject"
    workload = {**workload, "status": deactivation_target_status(workload, step.message, NOW)}
    step = next_check_step(workload)
    assert step is not None and step.kind == "deactivate", "the target is written once"
    workload = {**workload, "spec": {**workload["spec"], "active": False}}
    assert isinstance(next_action(train().build(), workload, flavors=FLAVORS), DeactivateWorkload)
    assert deactivation(workload) == (
        "DeactivatedDueToAdmissionCheck",
        'The workload is deactivated due to AdmissionCheck in Rejected state: "acc" (no way)',
    )


def test_a_provisioning_request_check_is_marked_inactive_once_and_others_are_left_alone() -> None:
    prov = {
        "metadata": {"name": "prov", "generation": 1},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"},
    }
    status = unsupported_check_status(prov, NOW)
    assert status is not None
    (active,) = status["conditions"]
    assert (active["type"], active["status"], active["reason"]) == (
        "Active",
        "False",
        "ControllerNotSupported",
    )
    assert "kuota does not run" in active["message"]
    assert unsupported_check_status({**prov, "status": status}, NOW) is None
    for controller in ("kueue.x-k8s.io/multikueue", "example.com/mine"):
        other = {**prov, "spec": {"controllerName": controller}}
        assert unsupported_check_status(other, NOW) is None


def test_a_check_removed_from_the_queue_no_longer_holds_a_reserved_workload() -> None:
    from scheduler.status.check_status import synced_status

    workload = reserve(workload_for(train().build()), "acc", "gone")
    workload = set_state(workload, "acc", "Ready")
    assert next_check_step(workload, ("acc", "gone")) is None, "still waiting for gone"
    step = next_check_step(workload, ("acc",))
    assert step is not None and (step.kind, step.checks) == ("sync", ("acc",))
    workload = {**workload, "status": synced_status(workload, step.checks, NOW)}
    assert [c["name"] for c in workload["status"]["admissionChecks"]] == ["acc"]
    assert condition(workload, "Admitted")["status"] == "True"
    assert isinstance(next_action(train().build(), workload, flavors=FLAVORS), StartJob)


def test_requeued_says_backoff_finished_only_once_the_backoff_is_over() -> None:
    from scheduler.core.decisions import Pending
    from scheduler.status.workload_status import pending_status

    workload = reserve(workload_for(train().build()), "acc")
    workload = set_state(workload, "acc", "Retry", requeueAfterSeconds=60)
    evicted = evicted_status(workload, Evict("ml/x", None, "AdmissionCheck", "m"), NOW)
    assert evicted is not None
    released = {**workload, "status": released_status({**workload, "status": evicted}, NOW)}
    decision = Pending("ml/x", "cq", "Pending", "couldn't assign flavors")

    def requeued(at: timedelta) -> tuple[str, str]:
        status = pending_status(released, decision, NOW + at)
        assert status is not None
        found = next(c for c in status["conditions"] if c["type"] == "Requeued")
        return found["status"], found["reason"]

    assert requeued(timedelta(seconds=30)) == ("False", "AdmissionCheck")
    assert requeued(timedelta(seconds=61)) == ("True", "BackoffFinished")
