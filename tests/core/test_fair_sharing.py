"""Fair sharing: dominant resource share, admission order, strategies.

See docs/scheduling.md#fair-sharing.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler.core.decisions import Admit
from scheduler.core.engine import Engine
from scheduler.core.fair_share import ZERO, dominant_resource_share
from tests.builders import (
    T0,
    cluster_queue,
    cohort,
    configuration,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)
from tests.core.test_preemption import release_all, settle, victims

FAIR = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}


def fair_engine(queues: list[Any], workloads: list[Any], *strategies: str) -> Engine:
    engine = Engine(configuration().fair_sharing(*strategies).model())
    engine.apply(resource_flavor("default").model())
    for builder in queues:
        engine.apply(builder.model())
        name = builder.raw["metadata"]["name"]
        engine.apply(local_queue(f"lq-{name}").cluster_queue(name).model())
    for item in workloads:
        engine.apply(item.model())
    engine.cache.tree.ensure_forest()
    return engine


def test_drs_example_of_8_2() -> None:
    engine = fair_engine(
        [
            cluster_queue("cq")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="2", gpu="5"))
            .preemption(**FAIR),
            cluster_queue("lending-cq")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="8", gpu="5"))
            .preemption(**FAIR),
        ],
        [workload("w").queue("lq-cq").pod_set(cpu="3", gpu="7").reserve_quota("cq")],
    )
    share = dominant_resource_share(engine.cache.tree.forest.cluster_queues["cq"])
    assert (share.borrowing, share.value, share.weighted_share()) == (True, Fraction(200), 200)
    assert (
        dominant_resource_share(
            engine.cache.tree.forest.cluster_queues["lending-cq"]
        ).weighted_share()
        == 0
    )
    assert dominant_resource_share(engine.cache.tree.forest.cohorts["c"]).weighted_share() == 0


def test_drs_with_weight_2_halves_and_weight_0_is_infinite() -> None:
    for weight, want in (("2", 100), ("0", 9223372036854775807)):
        engine = fair_engine(
            [
                cluster_queue("cq")
                .cohort("c")
                .resource_group(flavor_quotas("default", cpu="2", gpu="5"))
                .preemption(**FAIR)
                .fair_weight(weight),
                cluster_queue("lending-cq")
                .cohort("c")
                .resource_group(flavor_quotas("default", cpu="8", gpu="5"))
                .preemption(**FAIR),
            ],
            [workload("w").queue("lq-cq").pod_set(cpu="3", gpu="7").reserve_quota("cq")],
        )
        assert (
            dominant_resource_share(engine.cache.tree.forest.cluster_queues["cq"]).weighted_share()
            == want
        )


def abc(*, weights: dict[str, str] | None = None) -> list[Any]:
    """ClusterQueues a, b, c (3 cpu each) and preemptible (none) in cohort c, with ``weights``."""
    queues = [
        cluster_queue(name)
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu=cpu))
        .preemption(**FAIR)
        for name, cpu in (("a", "3"), ("b", "3"), ("c", "3"), ("preemptible", "0"))
    ]
    for queue in queues:
        weight = (weights or {}).get(queue.name)
        if weight is not None:
            queue.fair_weight(weight)
    return queues


def b_running(sizes: tuple[str, ...] = ("1",) * 5) -> list[Any]:
    return [
        workload(f"b{i + 1}")
        .queue("lq-b")
        .priority(0)
        .created(i + 1)
        .pod_set(cpu=size)
        .reserve_quota("b", at=i + 1)
        for i, size in enumerate(sizes)
    ]


@pytest.mark.parametrize(
    "strategies", [(), ("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",)]
)
def test_8_6_example_1_within_nominal_reclaims(strategies: tuple[str, ...]) -> None:
    engine = fair_engine(
        abc(),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-c").priority(0).created(100).pod_set(cpu="1"),
        ],
        *strategies,
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortReclamation"}


def test_8_6_example_2_final_share_passes() -> None:
    engine = fair_engine(
        abc(),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="1"),
        ],
        "LessThanOrEqualToFinalShare",
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortFairSharing"}


def test_8_6_example_2_initial_share_also_passes() -> None:
    # preemptorNew 111 < targetOld 222.
    engine = fair_engine(
        abc(),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="1"),
        ],
        "LessThanInitialShare",
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortFairSharing"}


def test_8_6_example_3_nobody_borrowing_no_preemption() -> None:
    engine = fair_engine(
        abc(),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            workload("b1").queue("lq-b").priority(0).pod_set(cpu="3").reserve_quota("b"),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="3").reserve_quota("c"),
            workload("p").queue("lq-c").priority(0).created(100).pod_set(cpu="1"),
        ],
    )
    assert victims(engine.cycle(T0)) == {}


def test_8_6_example_4_final_share_skips_b1_and_takes_b2() -> None:
    # b1 (2), b2 (1), b3 (2): candidate order b1, b2, b3 means b1 is the newest reservation.
    b = [
        workload("b1")
        .queue("lq-b")
        .priority(0)
        .created(3)
        .pod_set(cpu="2")
        .reserve_quota("b", at=3),
        workload("b2")
        .queue("lq-b")
        .priority(0)
        .created(2)
        .pod_set(cpu="1")
        .reserve_quota("b", at=2),
        workload("b3")
        .queue("lq-b")
        .priority(0)
        .created(1)
        .pod_set(cpu="2")
        .reserve_quota("b", at=1),
    ]
    engine = fair_engine(
        abc(),
        [
            *b,
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="3500m"),
        ],
        "LessThanOrEqualToFinalShare",
    )
    assert victims(engine.cycle(T0)) == {"b2": "InCohortFairSharing"}


def test_8_6_example_4_initial_share_takes_the_first_candidate() -> None:
    b = [
        workload("b1")
        .queue("lq-b")
        .priority(0)
        .created(3)
        .pod_set(cpu="2")
        .reserve_quota("b", at=3),
        workload("b2")
        .queue("lq-b")
        .priority(0)
        .created(2)
        .pod_set(cpu="1")
        .reserve_quota("b", at=2),
        workload("b3")
        .queue("lq-b")
        .priority(0)
        .created(1)
        .pod_set(cpu="2")
        .reserve_quota("b", at=1),
    ]
    engine = fair_engine(
        abc(),
        [
            *b,
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="3500m"),
        ],
        "LessThanInitialShare",
    )
    assert victims(engine.cycle(T0)) == {"b1": "InCohortFairSharing"}


def test_8_6_example_4_default_strategies_use_final_share_first() -> None:
    b = [
        workload("b1")
        .queue("lq-b")
        .priority(0)
        .created(3)
        .pod_set(cpu="2")
        .reserve_quota("b", at=3),
        workload("b2")
        .queue("lq-b")
        .priority(0)
        .created(2)
        .pod_set(cpu="1")
        .reserve_quota("b", at=2),
        workload("b3")
        .queue("lq-b")
        .priority(0)
        .created(1)
        .pod_set(cpu="2")
        .reserve_quota("b", at=1),
    ]
    engine = fair_engine(
        abc(),
        [
            *b,
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="3500m"),
        ],
    )
    assert victims(engine.cycle(T0)) == {"b2": "InCohortFairSharing"}


def test_weight_zero_preemptor_cannot_take_from_a_finite_share() -> None:
    # a has weight 0: with P it borrows, so its share is infinite; b's is finite -> retry list only,
    # and the second strategy needs preemptorNew < targetOld, which +inf never is.
    engine = fair_engine(
        abc(weights={"a": "0"}),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="1"),
        ],
    )
    assert victims(engine.cycle(T0)) == {}


def test_weight_zero_queue_can_still_reclaim_its_nominal_quota() -> None:
    engine = fair_engine(
        abc(weights={"c": "0"}),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-c").priority(0).created(100).pod_set(cpu="1"),
        ],
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortReclamation"}


def test_weight_zero_borrower_is_preempted_first() -> None:
    # b (weight 0) and d (weight 1) both borrow 1; a reclaims within nominal from the
    # infinite share first.
    queues = [
        cluster_queue("a")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="3"))
        .preemption(**FAIR),
        cluster_queue("b")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="3"))
        .preemption(**FAIR)
        .fair_weight("0"),
        cluster_queue("d")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="3"))
        .preemption(**FAIR),
        cluster_queue("preemptible")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="0"))
        .preemption(**FAIR),
    ]
    engine = fair_engine(
        queues,
        [
            workload("b1")
            .queue("lq-b")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("b", at=1),
            workload("d1")
            .queue("lq-d")
            .priority(0)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("d", at=2),
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="1").reserve_quota("a"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="2"),
        ],
    )
    assert victims(engine.cycle(T0)) == {"b1": "InCohortReclamation"}


def test_8_4_admission_order_lower_share_first() -> None:
    queues = [
        cluster_queue(name)
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="6"))
        .preemption(**FAIR)
        for name in ("x", "y", "z")
    ]
    engine = fair_engine(
        queues,
        [
            workload("x0").queue("lq-x").priority(0).pod_set(cpu="8").reserve_quota("x"),
            workload("y0").queue("lq-y").priority(0).pod_set(cpu="2").reserve_quota("y"),
            workload("xw").queue("lq-x").priority(100).created(1).pod_set(cpu="4"),
            workload("yw").queue("lq-y").priority(0).created(2).pod_set(cpu="6"),
        ],
    )
    for builder in queues:  # no preemption in this example
        builder.preemption()
        engine.apply(builder.model())
    result = engine.cycle(T0)
    assert [d.workload for d in result.decisions if isinstance(d, Admit)] == ["default/yw"]


def test_no_ping_pong_under_fair_sharing() -> None:
    engine = fair_engine(
        abc(),
        [
            workload("a1").queue("lq-a").priority(0).pod_set(cpu="3").reserve_quota("a"),
            *b_running(),
            workload("c1").queue("lq-c").priority(0).pod_set(cpu="1").reserve_quota("c"),
            workload("p").queue("lq-a").priority(0).created(100).pod_set(cpu="1"),
            workload("q").queue("lq-b").priority(0).created(101).pod_set(cpu="1"),
        ],
    )
    first = engine.cycle(T0)
    release_all(engine, first)
    log = settle(engine)
    assert len(log) + len(victims(first)) <= 2


def test_status_reports_the_weighted_share_of_queues_and_cohorts() -> None:
    engine = fair_engine(
        [
            cluster_queue("cq")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="2", gpu="5"))
            .preemption(**FAIR)
            .fair_weight("2"),
            cluster_queue("lending-cq")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="8", gpu="5"))
            .preemption(**FAIR),
        ],
        [workload("w").queue("lq-cq").pod_set(cpu="3", gpu="7").reserve_quota("cq")],
    )
    assert engine.view.cluster_queue_status("cq").weighted_share == 100
    assert engine.view.cluster_queue_status("lending-cq").weighted_share == 0
    assert engine.view.cohort_share("c") == ZERO
    assert engine.view.cohort_share("never-seen") == ZERO


def test_a_child_cohort_borrowing_from_its_parent_has_a_share() -> None:
    engine = Engine(configuration().fair_sharing().model())
    engine.apply(resource_flavor("default").model())
    engine.apply(cohort("root").model())
    engine.apply(cohort("team").parent("root").model())
    engine.apply(
        cluster_queue("a").cohort("team").resource_group(flavor_quotas("default", cpu="2")).model()
    )
    engine.apply(
        cluster_queue("b").cohort("root").resource_group(flavor_quotas("default", cpu="8")).model()
    )
    engine.apply(local_queue("lq-a").cluster_queue("a").model())
    engine.apply(workload("w").queue("lq-a").pod_set(cpu="6").reserve_quota("a").model())
    # team borrows 4 cpu of the 10 the whole tree could lend: 4 x 1000 / 10.
    team = engine.view.cohort_share("team")
    assert team is not None and team.weighted_share() == 400
    assert engine.view.cohort_share("root") == ZERO


def test_without_fair_sharing_no_share_is_reported() -> None:
    engine = Engine()
    engine.apply(resource_flavor("default").model())
    engine.apply(cluster_queue("cq").resource_group(flavor_quotas("default", cpu="1")).model())
    assert engine.view.cluster_queue_status("cq").weighted_share is None
    assert engine.view.cohort_share("c") is None
