"""An elastic Job that scales up gets a new workload slice, admitted in place of the old one
(docs/concepts.md#elastic-jobs).

The new slice asks for the whole new size; it is admitted when that fits with
the old slice's quota counted as free, in the old slice's flavors, and the
old slice is finished in the same step (the ``Admit`` names it), so the
quota is never counted twice.
"""

from __future__ import annotations

from scheduler.core.decisions import Admit
from scheduler.core.engine import Engine
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload

ELASTIC = {"kueue.x-k8s.io/elastic-job": "true"}
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"


def setup(*workloads: workload, cpu: str = "4", flavors: tuple[str, ...] = ("default",)) -> Engine:
    engine = Engine()
    for obj in (
        *(resource_flavor(name) for name in flavors),
        cluster_queue("cq").resource_group(*(flavor_quotas(name, cpu=cpu) for name in flavors)),
        local_queue("lq").cluster_queue("cq"),
        *workloads,
    ):
        engine.apply(obj.model())
    return engine


def old_slice(pods: int, flavor: str = "default") -> workload:
    return (
        workload("old")
        .queue("lq")
        .annotations(ELASTIC)
        .created(1)
        .pod_set(count=pods, cpu="1")
        .reserve_quota(
            "cq",
            {
                "name": "main",
                "flavors": {"cpu": flavor},
                "resourceUsage": {"cpu": str(pods)},
                "count": pods,
            },
        )
    )


def new_slice(pods: int) -> workload:
    return (
        workload("new")
        .queue("lq")
        .annotations({**ELASTIC, REPLACES: "default/old"})
        .created(2)
        .pod_set(count=pods, cpu="1")
    )


def used(engine: Engine, flavor: str = "default") -> str:
    return str(engine.view.cluster_queue_status("cq").usage[flavor]["cpu"])


def test_a_new_slice_that_fits_with_the_old_ones_quota_replaces_it() -> None:
    engine = setup(old_slice(2), new_slice(4))
    admitted = [d for d in engine.cycle(T0).decisions if isinstance(d, Admit)]
    assert [(d.workload, d.replaces) for d in admitted] == [("default/new", "default/old")]
    assert engine.view.workload_state("default/old").state == "Finished"
    assert engine.view.workload_state("default/new").state == "Admitted"
    assert used(engine) == "4", "the new slice's 4 CPUs, the old slice's 2 no longer counted"


def test_a_new_slice_larger_than_the_quota_waits_and_the_old_one_keeps_running() -> None:
    engine = setup(old_slice(2), new_slice(5))
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/old").state == "Admitted"
    waiting = engine.view.workload_state("default/new")
    assert waiting.state == "Pending"
    assert used(engine) == "2"


def test_a_new_slice_keeps_the_old_ones_flavor() -> None:
    """The old slice runs on the second flavor: the new one may not move to the first."""
    engine = setup(old_slice(2, flavor="spot"), new_slice(3), cpu="3", flavors=("default", "spot"))
    engine.run_until_steady(T0)
    state = engine.view.workload_state("default/new")
    assert state.state == "Admitted"
    assert state.admission[0].flavors == {"cpu": "spot"}
    assert used(engine, "spot") == "3" and used(engine, "default") == "0"


def test_a_new_slice_does_not_preempt_the_slice_it_replaces() -> None:
    """Too large even with the old slice's quota: it waits, it never evicts its predecessor."""
    engine = setup(old_slice(3), new_slice(6), cpu="4")
    decisions = engine.cycle(T0).decisions
    assert [type(d).__name__ for d in decisions] == ["Pending"]
    assert engine.view.workload_state("default/old").state == "Admitted"


def test_a_new_slice_waits_while_the_old_one_holds_no_quota() -> None:
    """The old slice is pending (too large to fit): the new one is not admitted beside it."""
    old = workload("old").queue("lq").annotations(ELASTIC).created(1).pod_set(count=5, cpu="1")
    engine = setup(old, new_slice(1), cpu="4")
    engine.run_until_steady(T0)
    state = engine.view.workload_state("default/new")
    assert state.state == "Pending"
    assert "replaces, default/old" in state.message
    assert used(engine) == "0"


def test_a_slice_whose_predecessor_is_gone_is_an_ordinary_workload() -> None:
    engine = setup(new_slice(3))
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/new").state == "Admitted"
    assert used(engine) == "3"
