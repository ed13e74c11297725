"""What MultiKueue copies of each kind to a worker, and the manager's status once it is gone."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.jobs import MultiKueueAdapter, by_framework, kinds_with
from scheduler.jobs.multikueue_copy import with_managed_by

MANAGED = "kueue.x-k8s.io/multikueue"
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"

RUNNING: dict[str, dict[str, Any]] = {
    "batch/job": {"active": 2, "ready": 2},
    "jobset.x-k8s.io/jobset": {
        "replicatedJobsStatus": [{"name": "w", "active": 2, "ready": 1, "succeeded": 0}]
    },
    "kubeflow.org/mpijob": {
        "replicaStatuses": {"Launcher": {"active": 1}, "Worker": {"active": 2}}
    },
    "kubeflow.org/pytorchjob": {"replicaStatuses": {"Master": {"active": 1}}},
    "kubeflow.org/jaxjob": {"replicaStatuses": {"Worker": {"active": 3}}},
    "ray.io/rayjob": {"jobDeploymentStatus": "Running"},
    "ray.io/raycluster": {"state": "ready"},
    "ray.io/rayservice": {"conditions": [{"type": "Ready", "status": "True"}]},
    "workload.codeflare.dev/appwrapper": {
        "conditions": [{"type": "QuotaReserved", "status": "True"}]
    },
    "trainer.kubeflow.org/trainjob": {"jobsStatus": [{"name": "node", "active": 2, "ready": 2}]},
}
"""A status of each kind while its copy runs (what ``active`` counts)."""


def test_every_kind_kueue_dispatches_and_kuota_manages_has_an_adapter() -> None:
    assert {kind.framework for kind in kinds_with(MultiKueueAdapter)} == set(RUNNING)


@pytest.mark.parametrize("framework", sorted(RUNNING))
def test_once_the_copy_is_gone_the_managers_object_runs_nothing(framework: str) -> None:
    kind = by_framework(framework)
    assert isinstance(kind, MultiKueueAdapter)
    running = {"apiVersion": kind.api_version, "kind": kind.kind, "status": RUNNING[framework]}
    assert kind.active(running) > 0
    stopped = kind.stopped_status(RUNNING[framework])
    assert stopped is not None
    assert kind.active({**running, "status": stopped}) == 0
    assert kind.stopped_status(stopped) is None, "nothing to write a second time"


@pytest.mark.parametrize("framework", sorted(RUNNING))
def test_the_copy_is_the_spec_without_managed_by_and_names_its_workload(framework: str) -> None:
    kind = by_framework(framework)
    assert isinstance(kind, MultiKueueAdapter)
    manager_object = with_managed_by(
        {
            "apiVersion": kind.api_version,
            "kind": kind.kind,
            "metadata": {
                "name": "train",
                "namespace": "team-a",
                "uid": "u-1",
                "resourceVersion": "7",
                "labels": {"kueue.x-k8s.io/queue-name": "q"},
                "ownerReferences": [{"kind": "Other", "name": "x", "uid": "u-0"}],
            },
            "spec": {"suspend": True, "runPolicy": {"suspend": True}, "other": [1, 2]},
            "status": RUNNING[framework],
        },
        kind.managed_by_at,
        MANAGED,
    )
    copied = kind.remote_copy(manager_object, "job-train-abc", "manager-1")
    assert copied["apiVersion"] == kind.api_version and copied["kind"] == kind.kind
    assert copied["metadata"] == {
        "name": "train",
        "namespace": "team-a",
        "labels": {
            "kueue.x-k8s.io/queue-name": "q",
            ORIGIN: "manager-1",
            PREBUILT: "job-train-abc",
        },
    }
    assert "status" not in copied
    assert copied["spec"]["other"] == [1, 2]
    spec_without = with_managed_by({"spec": copied["spec"]}, kind.managed_by_at, None)["spec"]
    assert copied["spec"] == spec_without, "managedBy removed, so the worker's controller runs it"
    assert "managedBy" not in copied["spec"] and "managedBy" not in copied["spec"]["runPolicy"]


def test_managed_by_is_set_and_removed_at_any_depth() -> None:
    at = ("spec", "runPolicy", "managedBy")
    set_ = with_managed_by({"spec": {}}, at, MANAGED)
    assert set_ == {"spec": {"runPolicy": {"managedBy": MANAGED}}}
    assert with_managed_by(set_, at, None) == {"spec": {"runPolicy": {}}}
    assert with_managed_by({}, at, None) == {}
