"""Fair sharing: dominant resource share, admission order, strategies.

See docs/scheduling.md#fair-sharing.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler.api.config import parse_configuration
from scheduler.core.decisions import Admit
from scheduler.core.engine import Engine
from scheduler.core.fair_share import dominant_resource_share
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload
from tests.core.test_preemption import incoming, release_all, running, settle, victims


def config(*strategies: str) -> Any:
    section: dict[str, Any] = {"preemptionStrategies": list(strategies)} if strategies else {}
    return parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "fairSharing": section,
        }
    )


def fair_engine(queues: list[Any], workloads: list[Any], *strategies: str) -> Engine:
    engine = Engine(config(*strategies))
    engine.apply(resource_flavor("default").model())
    for builder in queues:
        engine.apply(builder.model())
        name = builder.raw["metadata"]["name"]
        engine.apply(local_queue(f"lq-{name}").cluster_queue(name).model())
    for item in workloads:
        engine.apply(item.model())
    engine.cache.ensure_forest()
    return engine


def fq(name: str, cpu: str, *, weight: str | None = None, **resources: str) -> cluster_queue:
    builder = (
        cluster_queue(name)
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu=cpu, **resources))
    )
    builder.preemption(withinClusterQueue="LowerPriority", reclaimWithinCohort="Any")
    if weight is not None:
        builder.fair_weight(weight)
    return builder


def test_drs_example_of_8_2() -> None:
    engine = fair_engine(
        [fq("cq", "2", gpu="5"), fq("lending-cq", "8", gpu="5")],
        [workload("w").queue("lq-cq").pod_set(cpu="3", gpu="7").reserve_quota("cq")],
    )
    share = dominant_resource_share(engine.cache.forest.cluster_queues["cq"])
    assert (share.borrowing, share.value, share.weighted_share()) == (True, Fraction(200), 200)
    assert (
        dominant_resource_share(engine.cache.forest.cluster_queues["lending-cq"]).weighted_share()
        == 0
    )
    assert dominant_resource_share(engine.cache.forest.cohorts["c"]).weighted_share() == 0


def test_drs_with_weight_2_halves_and_weight_0_is_infinite() -> None:
    for weight, want in (("2", 100), ("0", 9223372036854775807)):
        engine = fair_engine(
            [fq("cq", "2", weight=weight, gpu="5"), fq("lending-cq", "8", gpu="5")],
            [workload("w").queue("lq-cq").pod_set(cpu="3", gpu="7").reserve_quota("cq")],
        )
        assert (
            dominant_resource_share(engine.cache.forest.cluster_queues["cq"]).weighted_share()
            == want
        )


def abc(*, weights: dict[str, str] | None = None) -> list[Any]:
    weights = weights or {}
    return [
        fq(name, cpu, weight=weights.get(name))
        for name, cpu in (("a", "3"), ("b", "3"), ("c", "3"), ("preemptible", "0"))
    ]


def b_running(sizes: tuple[str, ...] = ("1",) * 5) -> list[Any]:
    return [running(f"b{i + 1}", "b", size, 0, i + 1) for i, size in enumerate(sizes)]


@pytest.mark.parametrize(
    "strategies", [(), ("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",)]
)
def test_8_6_example_1_within_nominal_reclaims(strategies: tuple[str, ...]) -> None:
    engine = fair_engine(
        abc(),
        [running("a1", "a", "3"), *b_running(), running("c1", "c", "1"), incoming("p", "c", "1")],
        *strategies,
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortReclamation"}


def test_8_6_example_2_final_share_passes() -> None:
    engine = fair_engine(
        abc(),
        [running("a1", "a", "3"), *b_running(), running("c1", "c", "1"), incoming("p", "a", "1")],
        "LessThanOrEqualToFinalShare",
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortFairSharing"}


def test_8_6_example_2_initial_share_also_passes() -> None:
    # preemptorNew 111 < targetOld 222.
    engine = fair_engine(
        abc(),
        [running("a1", "a", "3"), *b_running(), running("c1", "c", "1"), incoming("p", "a", "1")],
        "LessThanInitialShare",
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortFairSharing"}


def test_8_6_example_3_nobody_borrowing_no_preemption() -> None:
    engine = fair_engine(
        abc(),
        [
            running("a1", "a", "3"),
            running("b1", "b", "3"),
            running("c1", "c", "3"),
            incoming("p", "c", "1"),
        ],
    )
    assert victims(engine.cycle(T0)) == {}


def test_8_6_example_4_final_share_skips_b1_and_takes_b2() -> None:
    # b1 (2), b2 (1), b3 (2): candidate order b1, b2, b3 means b1 is the newest reservation.
    b = [
        running("b1", "b", "2", 0, 3),
        running("b2", "b", "1", 0, 2),
        running("b3", "b", "2", 0, 1),
    ]
    engine = fair_engine(
        abc(),
        [*b, running("c1", "c", "1"), incoming("p", "a", "3500m")],
        "LessThanOrEqualToFinalShare",
    )
    assert victims(engine.cycle(T0)) == {"b2": "InCohortFairSharing"}


def test_8_6_example_4_initial_share_takes_the_first_candidate() -> None:
    b = [
        running("b1", "b", "2", 0, 3),
        running("b2", "b", "1", 0, 2),
        running("b3", "b", "2", 0, 1),
    ]
    engine = fair_engine(
        abc(), [*b, running("c1", "c", "1"), incoming("p", "a", "3500m")], "LessThanInitialShare"
    )
    assert victims(engine.cycle(T0)) == {"b1": "InCohortFairSharing"}


def test_8_6_example_4_default_strategies_use_final_share_first() -> None:
    b = [
        running("b1", "b", "2", 0, 3),
        running("b2", "b", "1", 0, 2),
        running("b3", "b", "2", 0, 1),
    ]
    engine = fair_engine(abc(), [*b, running("c1", "c", "1"), incoming("p", "a", "3500m")])
    assert victims(engine.cycle(T0)) == {"b2": "InCohortFairSharing"}


def test_weight_zero_preemptor_cannot_take_from_a_finite_share() -> None:
    # a has weight 0: with P it borrows, so its share is infinite; b's is finite -> retry list only,
    # and the second strategy needs preemptorNew < targetOld, which +inf never is.
    engine = fair_engine(
        abc(weights={"a": "0"}),
        [running("a1", "a", "3"), *b_running(), running("c1", "c", "1"), incoming("p", "a", "1")],
    )
    assert victims(engine.cycle(T0)) == {}


def test_weight_zero_queue_can_still_reclaim_its_nominal_quota() -> None:
    engine = fair_engine(
        abc(weights={"c": "0"}),
        [running("a1", "a", "3"), *b_running(), running("c1", "c", "1"), incoming("p", "c", "1")],
    )
    assert victims(engine.cycle(T0)) == {"b5": "InCohortReclamation"}


def test_weight_zero_borrower_is_preempted_first() -> None:
    # b (weight 0) and d (weight 1) both borrow 1; a reclaims within nominal from the
    # infinite share first.
    queues = [fq("a", "3"), fq("b", "3", weight="0"), fq("d", "3"), fq("preemptible", "0")]
    engine = fair_engine(
        queues,
        [
            running("b1", "b", "4", 0, 1),
            running("d1", "d", "4", 0, 2),
            running("a1", "a", "1"),
            incoming("p", "a", "2"),
        ],
    )
    assert victims(engine.cycle(T0)) == {"b1": "InCohortReclamation"}


def test_8_4_admission_order_lower_share_first() -> None:
    queues = [fq(name, "6") for name in ("x", "y", "z")]
    engine = fair_engine(
        queues,
        [
            running("x0", "x", "8"),
            running("y0", "y", "2"),
            incoming("xw", "x", "4", priority=100, created=1),
            incoming("yw", "y", "6", created=2),
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
            running("a1", "a", "3"),
            *b_running(),
            running("c1", "c", "1"),
            incoming("p", "a", "1"),
            incoming("q", "b", "1", created=101),
        ],
    )
    first = engine.cycle(T0)
    release_all(engine, first)
    log = settle(engine)
    assert len(log) + len(victims(first)) <= 2
