"""stopPolicy: Hold keeps admitted workloads, HoldAndDrain evicts them.

See docs/scheduling.md#stop-policies.
"""

from __future__ import annotations

import pytest

from scheduler.core.decisions import Admit, Evict
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)


def running_two() -> Engine:
    """Two workloads admitted in ``cq`` through ``lq``, a third pending for lack of quota."""
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").stop_policy("None").resource_group(flavor_quotas("f", cpu="4")),
        local_queue("lq").cluster_queue("cq").stop_policy("None"),
        workload("a").queue("lq").created(1).pod_set(cpu="2"),
        workload("b").queue("lq").created(2).pod_set(cpu="2"),
        workload("c").queue("lq").created(3).pod_set(cpu="2"),
    )
    engine.run_until_steady(T0)
    assert [engine.view.workload_state(k).state for k in engine.view.workload_keys()] == [
        "Admitted",
        "Admitted",
        "Pending",
    ]
    return engine


def evictions(engine: Engine) -> list[Evict]:
    results, _ = engine.run_until_steady(T0)
    return [d for r in results for d in r.decisions if isinstance(d, Evict)]


def test_hold_and_drain_on_the_cluster_queue_evicts_every_admitted_workload_once() -> None:
    engine = running_two()
    engine.apply(
        cluster_queue("cq")
        .stop_policy("HoldAndDrain")
        .resource_group(flavor_quotas("f", cpu="4"))
        .model()
    )
    evicted = evictions(engine)
    assert evicted == [
        Evict("default/a", None, "ClusterQueueStopped", "The ClusterQueue is stopped"),
        Evict("default/b", None, "ClusterQueueStopped", "The ClusterQueue is stopped"),
    ]
    state = engine.view.workload_state("default/a")
    assert (state.state, state.reason, state.message) == (
        "Admitted",
        "ClusterQueueStopped",
        "The ClusterQueue is stopped",
    )
    assert evictions(engine) == []  # issued once, while the quota is still held
    # The pods are gone: the quota is free, and nothing is admitted while stopped.
    engine.release("default/a")
    engine.release("default/b")
    results, _ = engine.run_until_steady(T0)
    assert not any(isinstance(d, Admit) for r in results for d in r.decisions)
    for key in ("default/a", "default/b", "default/c"):
        state = engine.view.workload_state(key)
        assert (state.state, state.reason, state.message) == (
            "Pending",
            "Suspended",
            "ClusterQueue cq is inactive",
        )
    assert engine.view.cluster_queue_status("cq").admitted == 0
    assert engine.view.cluster_queue_status("cq").pending == 3
    # Resumed: the drained workloads are admitted again, in their queue order.
    engine.apply(
        cluster_queue("cq").stop_policy("None").resource_group(flavor_quotas("f", cpu="4")).model()
    )
    engine.run_until_steady(T0)
    assert [engine.view.workload_state(k).state for k in engine.view.workload_keys()] == [
        "Admitted",
        "Admitted",
        "Pending",
    ]


def test_hold_keeps_admitted_workloads_and_admits_nothing_new() -> None:
    engine = running_two()
    engine.apply(
        cluster_queue("cq").stop_policy("Hold").resource_group(flavor_quotas("f", cpu="4")).model()
    )
    assert evictions(engine) == []
    states = {k: engine.view.workload_state(k) for k in engine.view.workload_keys()}
    assert states["default/a"].state == states["default/b"].state == "Admitted"
    assert (states["default/c"].reason, states["default/c"].message) == (
        "Suspended",
        "ClusterQueue cq is inactive",
    )
    engine.finish("default/a")
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/c").state == "Pending"


def test_hold_and_drain_on_the_local_queue_evicts_only_its_workloads() -> None:
    engine = running_two()
    engine.apply(local_queue("other").cluster_queue("cq").model())
    engine.apply(workload("d").queue("other").created(4).pod_set(cpu="1").model())
    engine.apply(
        cluster_queue("cq")
        .stop_policy("None")
        .resource_group(flavor_quotas("f", cpu="4"))
        .resource_group(flavor_quotas("f", cpu="5"))
        .model()
    )
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/d").state == "Admitted"
    engine.apply(local_queue("lq").cluster_queue("cq").stop_policy("HoldAndDrain").model())
    evicted = evictions(engine)
    assert evicted == [
        Evict("default/a", None, "LocalQueueStopped", "The LocalQueue is stopped"),
        Evict("default/b", None, "LocalQueueStopped", "The LocalQueue is stopped"),
    ]
    engine.release("default/a")
    engine.release("default/b")
    engine.run_until_steady(T0)
    state = engine.view.workload_state("default/a")
    assert (state.state, state.reason, state.message) == (
        "Pending",
        "Suspended",
        "LocalQueue lq is inactive",
    )
    assert engine.view.workload_state("default/d").state == "Admitted"
    engine.apply(local_queue("lq").cluster_queue("cq").stop_policy("None").model())
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/a").state == "Admitted"


@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_a_local_queue_drains_first(policy: str) -> None:
    """Both stopped: the LocalQueue's reason wins, as in Kueue's workload controller."""
    engine = running_two()
    engine.apply(
        cluster_queue("cq").stop_policy(policy).resource_group(flavor_quotas("f", cpu="4")).model()
    )
    engine.apply(local_queue("lq").cluster_queue("cq").stop_policy("HoldAndDrain").model())
    assert {e.reason for e in evictions(engine)} == {"LocalQueueStopped"}


def test_a_workload_evicted_before_a_restart_is_not_evicted_again() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").stop_policy("HoldAndDrain").resource_group(flavor_quotas("f", cpu="4")),
        local_queue("lq").cluster_queue("cq").stop_policy("None"),
    )
    admitted = workload("a").queue("lq").pod_set(cpu="2").reserve_quota("cq", flavor="f")
    admitted.raw["status"]["conditions"].append(
        {
            "type": "Evicted",
            "status": "True",
            "reason": "ClusterQueueStopped",
            "message": "The ClusterQueue is stopped",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    )
    engine.apply(admitted.model())
    assert evictions(engine) == []
    engine.release("default/a")
    assert engine.view.cluster_queue_status("cq").admitted == 0
