"""An elastic Job that scales down keeps its admission and gives back the quota of the
pods it no longer asks for (docs/concepts.md#elastic-jobs).

The Job controller lowers the Workload's pod-set ``count``; the admission in
its status stays as it was.  The engine charges ``min(admitted, spec) -
reclaimable`` pods, so the freed quota goes to the next waiting workload.
"""

from __future__ import annotations

import copy

from scheduler.api.parse import parse_object
from scheduler.core.engine import Engine
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload

ELASTIC = {"kueue.x-k8s.io/elastic-job": "true"}


def setup(*workloads: workload) -> Engine:
    engine = Engine()
    for obj in (
        resource_flavor("default"),
        cluster_queue("cq").resource_group(flavor_quotas("default", cpu="4")),
        local_queue("lq").cluster_queue("cq"),
        *workloads,
    ):
        engine.apply(obj.model())
    return engine


def elastic(pods: int) -> workload:
    return (
        workload("elastic").queue("lq").annotations(ELASTIC).created(1).pod_set(count=pods, cpu="1")
    )


def waiting() -> workload:
    return workload("waiting").queue("lq").created(2).pod_set(count=2, cpu="1")


def scaled(holder: workload, pods: int, reclaimable: int = 0) -> object:
    """``holder`` after its Job controller lowered the count to ``pods`` (admission kept)."""
    raw = copy.deepcopy(holder.raw)
    raw["spec"]["podSets"][0]["count"] = pods
    if reclaimable:
        raw["status"]["reclaimablePods"] = [{"name": "main", "count": reclaimable}]
    return parse_object(raw)


def used(engine: Engine) -> str:
    return str(engine.view.cluster_queue_status("cq").usage["default"]["cpu"])


def states(engine: Engine) -> dict[str, str]:
    engine.run_until_steady(T0)
    return {key: engine.view.workload_state(key).state for key in engine.view.workload_keys()}


def test_scaling_down_frees_quota_for_a_waiting_workload() -> None:
    holder = elastic(4).reserve_quota("cq")
    engine = setup(holder, waiting())
    assert states(engine) == {"default/elastic": "Admitted", "default/waiting": "Pending"}
    assert used(engine) == "4"

    engine.apply(scaled(holder, 2))  # type: ignore[arg-type]

    assert states(engine) == {"default/elastic": "Admitted", "default/waiting": "Admitted"}
    assert used(engine) == "4", "2 pods of the elastic Job and 2 of the waiting one"


def test_a_scaled_down_workload_is_charged_for_the_pods_it_asks_for() -> None:
    holder = elastic(4).reserve_quota("cq")
    engine = setup(holder)
    engine.apply(scaled(holder, 3))  # type: ignore[arg-type]
    states(engine)
    assert used(engine) == "3"
    admission = engine.view.workload_state("default/elastic")
    assert admission.state == "Admitted"


def test_reclaimable_pods_count_from_the_scaled_down_size() -> None:
    holder = elastic(4).reserve_quota("cq")
    engine = setup(holder)
    engine.apply(scaled(holder, 3, reclaimable=1))  # type: ignore[arg-type]
    states(engine)
    assert used(engine) == "2", "3 asked for, 1 of them finished"


def test_a_partial_admission_is_still_charged_for_its_admitted_pods() -> None:
    """Spec count above the admitted count: the admission's count is what runs."""
    partial = (
        workload("partial")
        .queue("lq")
        .pod_set(count=6, cpu="1")
        .min_count(2)
        .reserve_quota(
            "cq",
            {
                "name": "main",
                "flavors": {"cpu": "default"},
                "resourceUsage": {"cpu": "3"},
                "count": 3,
            },
        )
    )
    engine = setup(partial)
    states(engine)
    assert used(engine) == "3"


def test_a_restarted_engine_reads_the_scaled_down_count_back() -> None:
    """Restart-safe: the lower count is in the Workload, so a new engine charges it at once."""
    holder = elastic(4).reserve_quota("cq")
    engine = setup(waiting())
    engine.apply(scaled(holder, 2))  # type: ignore[arg-type]
    assert states(engine) == {"default/elastic": "Admitted", "default/waiting": "Admitted"}
    assert used(engine) == "4"
