"""Model helpers: the pod-request rule, defaults of hand-built models."""

from __future__ import annotations

from scheduler.api.models import (
    ClusterQueue,
    ContainerResources,
    PodSet,
    Workload,
    WorkloadStatus,
    effective_pod_requests,
    frozen_map,
)
from scheduler.api.models.common import Condition, ObjectMeta
from scheduler.api.quantity import Quantity
from scheduler.api.refs import ResourceName


def res(**amounts: str) -> dict[ResourceName, Quantity]:
    return {ResourceName(k): Quantity.parse(v) for k, v in amounts.items()}


def container(restart_policy: str | None = None, **amounts: str) -> ContainerResources:
    return ContainerResources(requests=frozen_map(res(**amounts)), restart_policy=restart_policy)


def test_regular_containers_add_up() -> None:
    total = effective_pod_requests((container(cpu="1"), container(cpu="500m", memory="1Gi")))
    assert total == res(cpu="1500m", memory="1Gi")


def test_an_init_container_larger_than_the_steady_state_wins() -> None:
    total = effective_pod_requests(
        (container(cpu="1"),), (container(cpu="4"), container(memory="2Gi"))
    )
    assert total == res(cpu="4", memory="2Gi")


def test_sidecars_count_in_the_steady_state_and_under_later_init_containers() -> None:
    total = effective_pod_requests(
        (container(cpu="1"),),
        (container("Always", cpu="1"), container(cpu="2")),
    )
    # steady: 1 + 1 = 2; the second init container runs beside the sidecar: 2 + 1 = 3
    assert total == res(cpu="3")


def test_pod_level_requests_replace_and_overhead_adds() -> None:
    total = effective_pod_requests(
        (container(cpu="1", memory="1Gi"),), pod_requests=res(cpu="2"), overhead=res(cpu="100m")
    )
    assert total == res(cpu="2100m", memory="1Gi")


def test_hand_built_models_carry_the_api_defaults() -> None:
    cq = ClusterQueue(metadata=ObjectMeta(name="cq"))
    assert cq.name == "cq"
    assert cq.spec.queueing_strategy == "BestEffortFIFO"
    assert cq.spec.preemption.borrow_within_cohort.policy == "Never"
    pod_set = PodSet()
    assert (pod_set.name, pod_set.count, dict(pod_set.requests)) == ("main", 1, {})
    assert Workload(metadata=ObjectMeta(name="w", namespace="ns")).key == "ns/w"


def test_condition_lookup() -> None:
    status = WorkloadStatus(
        conditions=(
            Condition(type="Admitted", status="False"),
            Condition(type="QuotaReserved", status="True"),
        )
    )
    assert status.is_condition_true("QuotaReserved")
    assert not status.is_condition_true("Admitted")
    assert status.condition("Finished") is None
