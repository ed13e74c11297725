"""The scheduler charges what a namespace's LimitRanges and a RuntimeClass add
(docs/scheduling.md#workload-usage): a Job without requests is charged the defaults,
whichever of the Workload and the LimitRange the scheduler sees first; a RuntimeClass's pod
overhead is charged on top."""

from __future__ import annotations

from typing import Any

from scheduler.core.decisions import Admit, Pending
from tests.builders import limit_range, runtime_class

from .world import NAMESPACE, World, job, job_path

LIMIT_RANGES = f"/api/v1/namespaces/{NAMESPACE}/limitranges"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"


def bare_job(name: str, **pod_spec: Any) -> dict[str, Any]:
    built = job(name)
    spec = built["spec"]["template"]["spec"]
    spec["containers"][0].pop("resources", None)
    spec.update(pod_spec)
    return built


def defaults(cpu: str) -> dict[str, Any]:
    """The LimitRange ``ml/defaults``: containers request ``cpu`` unless they say."""
    return limit_range("defaults", NAMESPACE).item("Container", defaultRequest={"cpu": cpu}).build()


async def submit(world: World, name: str, **pod_spec: Any) -> None:
    world.add(job_path(name), bare_job(name, **pod_spec))
    await world.executor.jobs.reconcile_jobs()
    world.deliver()


def usage(world: World) -> int:
    return world.engine.view.cluster_queue_status("cq").usage["spot"]["cpu"].milli_value()


async def test_jobs_without_requests_are_charged_the_namespace_defaults() -> None:
    world = World().setup(cpu="2")
    world.add(f"{LIMIT_RANGES}/defaults", defaults("1"))
    for name in ("a", "b", "c"):
        await submit(world, name)
    result = await world.cycle()
    admitted = [d for d in result.decisions if isinstance(d, Admit)]
    assert len(admitted) == 2 and usage(world) == 2000
    assert [str(a.pod_sets[0].resource_usage["cpu"]) for a in admitted] == ["1", "1"]
    assert [type(d) for d in result.decisions if not isinstance(d, Admit)] == [Pending]


async def test_a_limit_range_seen_after_the_workload_counts_for_it_while_pending() -> None:
    world = World().setup(cpu="2")
    await submit(world, "a")
    world.add(f"{LIMIT_RANGES}/defaults", defaults("3"))
    result = await world.cycle()
    assert [type(d) for d in result.decisions] == [Pending], "3 CPUs never fit in 2"
    world.api.put(f"{LIMIT_RANGES}/defaults", defaults("1500m"))
    world.deliver()
    assert [type(d) for d in (await world.cycle()).decisions] == [Admit]
    assert usage(world) == 1500


async def test_a_runtime_class_overhead_is_charged_on_top() -> None:
    world = World().setup(cpu="2")
    world.add(f"{RUNTIME_CLASSES}/kata", runtime_class("kata", "kata").overhead(cpu="250m").build())
    kata = job("k", cpu="1")
    kata["spec"]["template"]["spec"]["runtimeClassName"] = "kata"
    world.add(job_path("k"), kata)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert [type(d) for d in (await world.cycle()).decisions] == [Admit]
    assert usage(world) == 1250
