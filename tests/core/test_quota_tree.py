"""The worked examples of docs/scheduling.md#worked-examples on the quota tree itself."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler.core.hierarchy import CohortSpecInfo, NodeQuota, build_forest
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.resource_node import (
    add_usage,
    borrowing_level,
    capacity_available,
    potential,
    remove_usage,
)
from scheduler.core.snapshot import Snapshot
from tests.builders import cluster_queue, flavor_quotas

CPU = ("default", "cpu")


def q(nominal: int, *, bl: int | None = None, ll: int | None = None) -> NodeQuota:
    return NodeQuota(
        {CPU: nominal}, {CPU: bl} if bl is not None else {}, {CPU: ll} if ll is not None else {}
    )


def flat(a: NodeQuota, b: NodeQuota, usage_a: int, usage_b: int):  # type: ignore[no-untyped-def]
    return build_forest(
        cluster_queues={"team-a": ("team-ab", a), "team-b": ("team-ab", b)},
        cohorts={},
        usage={"team-a": {CPU: usage_a}, "team-b": {CPU: usage_b}},
    )


@pytest.mark.parametrize(
    "usage_a, usage_b, want_a, want_b",
    [(0, 0, 21, 21), (15, 0, 6, 6), (9, 11, 1, 1)],
)
def test_flat_cohort(usage_a: int, usage_b: int, want_a: int, want_b: int) -> None:
    forest = flat(q(9), q(12), usage_a, usage_b)
    a, b = forest.cluster_queues["team-a"], forest.cluster_queues["team-b"]
    assert capacity_available(a, CPU) == want_a
    assert capacity_available(b, CPU) == want_b
    assert potential(a, CPU) == 21
    assert forest.cohorts["team-ab"].subtree_quota[CPU] == 21


def test_borrowing_limit_is_a_ceiling() -> None:
    forest = flat(q(9, bl=1), q(12), 0, 0)
    assert potential(forest.cluster_queues["team-a"], CPU) == 10
    forest = flat(q(9, bl=1), q(12), 9, 11)
    assert capacity_available(forest.cluster_queues["team-a"], CPU) == 1


@pytest.mark.parametrize(
    "usage_a, usage_b, root_usage, want_a, want_b", [(0, 5, 0, 10, 16), (10, 5, 10, 0, 6)]
)
def test_lending_limit(
    usage_a: int, usage_b: int, root_usage: int, want_a: int, want_b: int
) -> None:
    forest = flat(q(9), q(12, ll=1), usage_a, usage_b)
    root = forest.cohorts["team-ab"]
    assert forest.cluster_queues["team-b"].local_quota[CPU] == 11
    assert root.subtree_quota[CPU] == 10
    assert root.usage.get(CPU, 0) == root_usage
    assert capacity_available(forest.cluster_queues["team-a"], CPU) == want_a
    assert capacity_available(forest.cluster_queues["team-b"], CPU) == want_b


def hierarchical(a: int, b: int, c: int):  # type: ignore[no-untyped-def]
    return build_forest(
        cluster_queues={"a": ("org", q(6)), "b": ("org", q(2)), "c": ("root", q(10))},
        cohorts={"root": CohortSpecInfo(None, q(0)), "org": CohortSpecInfo("root", q(4, ll=2))},
        usage={"a": {CPU: a}, "b": {CPU: b}, "c": {CPU: c}},
    )


def test_hierarchical_cohorts() -> None:
    forest = hierarchical(0, 0, 0)
    org, root = forest.cohorts["org"], forest.cohorts["root"]
    assert (org.subtree_quota[CPU], org.local_quota[CPU], root.subtree_quota[CPU]) == (12, 10, 12)
    assert potential(forest.cluster_queues["b"], CPU) == 22
    assert potential(forest.cluster_queues["c"], CPU) == 12
    forest = hierarchical(8, 0, 10)
    assert forest.cohorts["org"].usage[CPU] == 8 and forest.cohorts["root"].usage[CPU] == 10
    assert capacity_available(forest.cluster_queues["c"], CPU) == 2
    assert capacity_available(forest.cluster_queues["b"], CPU) == 4
    add_usage(forest.cluster_queues["c"], CPU, 2)
    assert capacity_available(forest.cluster_queues["b"], CPU) == 2
    assert capacity_available(forest.cluster_queues["c"], CPU) == 0


def test_incremental_usage_equals_recomputation() -> None:
    forest = hierarchical(0, 0, 0)
    a = forest.cluster_queues["a"]
    for amount in (3, 5, 4):
        add_usage(a, CPU, amount)
    remove_usage(a, CPU, 5)
    fresh = hierarchical(7, 0, 0)
    assert forest.cohorts["org"].usage == fresh.cohorts["org"].usage
    assert forest.cohorts["root"].usage.get(CPU, 0) == fresh.cohorts["root"].usage.get(CPU, 0)


def test_borrowing_level_flat_and_hierarchical() -> None:
    forest = flat(q(9), q(12), 9, 6)
    assert borrowing_level(forest.cluster_queues["team-a"], CPU, 4) == 1
    assert borrowing_level(forest.cluster_queues["team-b"], CPU, 4) == 0
    forest = hierarchical(6, 2, 0)
    assert borrowing_level(forest.cluster_queues["a"], CPU, 2) == 1  # absorbed by org (height 1)
    assert borrowing_level(forest.cluster_queues["a"], CPU, 20) == 2  # only the root


def test_parent_cycle_is_reported() -> None:
    forest = build_forest(
        cluster_queues={"x": ("c1", q(1))},
        cohorts={"c1": CohortSpecInfo("c2", q(0)), "c2": CohortSpecInfo("c1", q(0))},
        usage={},
    )
    assert forest.in_cycle == {"x"}


def test_a_status_update_of_a_cluster_queue_keeps_the_tree() -> None:
    """kuota writes every queue's status about once a second; the watch brings each write
    back.  The tree (a thousand nodes at scale) is rebuilt only when the cohort, a quota
    or the fair-sharing weight changes."""

    def cq(nominal: str, cohort: str = "c", **status: object) -> object:
        built = cluster_queue("a").cohort(cohort)
        built.resource_group(flavor_quotas("default").resource("cpu", nominal, borrowing_limit="1"))
        return built.status(**status).model()

    cache = QuotaCache()
    cache.apply_cluster_queue(cq("4"))  # type: ignore[arg-type]
    cache.tree.ensure_forest()
    node = cache.cluster_queues["a"].node
    cache.apply_cluster_queue(cq("4", pendingWorkloads=3))  # type: ignore[arg-type]
    cache.tree.ensure_forest()
    assert cache.cluster_queues["a"].node is node, "a status update: same tree"
    for changed in (cq("5"), cq("5", cohort="d")):
        cache.apply_cluster_queue(changed)  # type: ignore[arg-type]
        cache.tree.ensure_forest()
        assert cache.cluster_queues["a"].node is not node
        node = cache.cluster_queues["a"].node
    assert node is not None and node.nominal[CPU] == 5000 and node.parent is not None
    assert node.parent.name == "d"


@given(
    st.lists(st.tuples(st.sampled_from(["team-a", "team-b"]), st.integers(1, 6)), max_size=8),
    st.integers(0, 9),
    st.integers(0, 12),
)
def test_removing_victims_together_equals_one_by_one(
    victims: list[tuple[str, int]], lend_a: int, nominal_b: int
) -> None:
    """``Snapshot.without`` sums a queue's victims before removing them: the tree inside must
    be the one that removing each victim in turn gives, and be restored after."""

    def forest():  # type: ignore[no-untyped-def]
        used = {"team-a": sum(a for q, a in victims if q == "team-a") + 3}
        used["team-b"] = sum(a for q, a in victims if q == "team-b") + 1
        return flat(q(9, ll=lend_a), q(nominal_b), used["team-a"], used["team-b"])

    def state(tree) -> list[int]:  # type: ignore[no-untyped-def]
        nodes = [*tree.cluster_queues.values(), *tree.cohorts.values()]
        return [node.usage.get(CPU, 0) for node in sorted(nodes, key=lambda n: n.name)]

    together, one_by_one = forest(), forest()
    before = state(together)
    for name, amount in victims:
        remove_usage(one_by_one.cluster_queues[name], CPU, amount)
    gone = [(together.cluster_queues[name], {CPU: amount}) for name, amount in victims]
    with Snapshot().without(gone):
        assert state(together) == state(one_by_one)
    assert state(together) == before
