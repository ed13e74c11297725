"""The Job that the controller tests of ``tests/jobs`` and ``tests/status`` follow through
its states: ``ml/train``, queued in ``user-queue``, two pods of one CPU each on nodes of
zone ``a``; the flavors the scheduler may place it on; and its Workload as the
controller makes it and the scheduler admits it.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Admit, PodSetAdmission
from scheduler.jobs.actions import CreateWorkload
from scheduler.jobs.controller import next_action
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.status.workload_status import admitted_status
from tests.builders import job

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FLAVORS = {
    "spot": FlavorPlacement({"instance-type": "spot"}, ({"key": "spot", "operator": "Exists"},)),
    "ondemand": FlavorPlacement({"instance-type": "ondemand"}),
}


def train(queue: str | None = "user-queue") -> job:
    """The Job ``ml/train`` (uid ``uid-1``), queued in ``queue`` (``None``: not queued)."""
    built = (
        job("train", "ml")
        .uid("uid-1")
        .labels()
        .parallelism(2)
        .completions(2)
        .template_labels(app="train")
        .node_selector(zone="a")
        .image("i")
        .requests(cpu="1")
    )
    return built.queue(queue) if queue else built


def workload_for(j: dict[str, Any]) -> dict[str, Any]:
    """The Workload the controller creates for the Job ``j``."""
    action = next_action(j, None, flavors=FLAVORS)
    assert isinstance(action, CreateWorkload)
    return action.workload


def admit(workload: dict[str, Any], flavor: str = "spot") -> dict[str, Any]:
    """``workload`` admitted by the scheduler in ClusterQueue ``cq`` on ``flavor``."""
    decision = Admit(
        workload="ml/x",
        cluster_queue="cq",
        pod_sets=(PodSetAdmission("main", 2, {"cpu": flavor}, {"cpu": Quantity.parse("2")}),),
        message="",
    )
    return {**workload, "status": admitted_status(workload, decision, NOW)}


def admitted_workload(obj: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
    """The Workload the controller makes for any job ``obj``, admitted on spot with these
    pod set counts (by name), without a scheduler."""
    created = next_action(obj, None, flavors={})
    assert isinstance(created, CreateWorkload)
    workload = copy.deepcopy(created.workload)
    workload["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": name, "count": count, "flavors": {"cpu": "spot"}}
                for name, count in counts.items()
            ],
        },
        "conditions": [
            {"type": "QuotaReserved", "status": "True"},
            {"type": "Admitted", "status": "True"},
        ],
    }
    return workload
