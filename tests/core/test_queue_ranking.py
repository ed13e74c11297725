"""The ranking each ClusterQueue queue keeps: queue order without sorting.

See docs/visibility.md#positions: places in the whole queue and in each
LocalQueue, the sticky preemptor first, pages by slicing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.ordering import QueueKey, queue_key
from scheduler.core.queues import ClusterQueueQueue, Ranking
from tests.builders import (
    T0,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def order(name: str, priority: int = 0, age: int = 0) -> QueueKey:
    return queue_key(
        priority=priority, timestamp=EPOCH + timedelta(seconds=age), uid=name, key=f"ns/{name}"
    )


def expected(members: dict[str, tuple[QueueKey, str]], first: str | None) -> list[str]:
    """The reference: sort everything, then move ``first`` to the front."""
    ranked = [o[3] for o, _ in sorted(members.values())]
    if first is not None:
        ranked.remove(first)
        ranked.insert(0, first)
    return ranked


members_strategy = st.dictionaries(
    st.sampled_from([f"w{i}" for i in range(12)]),
    st.tuples(st.integers(0, 2), st.integers(0, 3), st.sampled_from(["ns/a", "ns/b"])),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(
    first_round=members_strategy,
    second_round=members_strategy,
    leaving=st.sets(st.sampled_from([f"w{i}" for i in range(12)])),
    first_pick=st.integers(0, 11),
)
def test_ranking_matches_a_full_sort_through_any_changes(
    first_round: dict[str, tuple[int, int, str]],
    second_round: dict[str, tuple[int, int, str]],
    leaving: set[str],
    first_pick: int,
) -> None:
    ranking = Ranking()
    members: dict[str, tuple[QueueKey, str]] = {}
    for name, (priority, age, group) in [*first_round.items(), *second_round.items()]:
        members[f"ns/{name}"] = (order(name, priority, age), group)
        ranking.enter(order(name, priority, age), group)
    for name in leaving:
        members.pop(f"ns/{name}", None)
        ranking.leave(f"ns/{name}")
    keys = sorted(members)
    first = keys[first_pick % len(keys)] if keys else None
    for lead in (None, first):
        whole = expected(members, lead)
        assert ranking.keys(0, len(members) + 5, lead) == whole
        assert [ranking.position(key, lead) for key in whole] == list(range(len(whole)))
        for start, stop in ((1, 3), (2, 100), (0, 0), (5, 2)):
            assert ranking.keys(start, stop, lead) == whole[start:stop]
        for group in ("ns/a", "ns/b"):
            in_group = [k for k in whole if members[k][1] == group]
            assert ranking.group_size(group) == len(in_group)
            assert ranking.group_keys(group, 0, 100, lead) == in_group
            assert ranking.group_keys(group, 1, 2, lead) == in_group[1:2]
            assert [ranking.group_position(k, lead) for k in in_group] == list(range(len(in_group)))


def test_a_member_ranked_again_moves_and_changes_group() -> None:
    ranking = Ranking()
    ranking.enter(order("a", age=1), "ns/x")
    ranking.enter(order("b", age=2), "ns/x")
    ranking.enter(order("b", priority=5, age=2), "ns/y")
    assert ranking.keys(0, 10, None) == ["ns/b", "ns/a"]
    assert ranking.group_keys("ns/x", 0, 10, None) == ["ns/a"]
    assert ranking.group_position("ns/b", None) == 0
    assert ranking.position("ns/missing", None) is None


def test_the_queue_ranks_active_and_inadmissible_members_and_forgets_popped_ones() -> None:
    queue = ClusterQueueQueue()
    queue.push(order("old", age=1), "ns/lq")
    queue.push(order("new", age=2), "ns/lq")
    queue.park(order("urgent", priority=9, age=3), "ns/other")
    assert queue.ranking.keys(0, 10, queue.first) == ["ns/urgent", "ns/old", "ns/new"]
    assert queue.pop() == "ns/old"  # the heap's head; the inadmissible one is not popped
    assert queue.ranking.keys(0, 10, queue.first) == ["ns/urgent", "ns/new"]
    queue.push(order("old", age=1), "ns/lq")
    queue.sticky = "ns/new"
    assert queue.ranking.keys(0, 10, queue.first) == ["ns/new", "ns/urgent", "ns/old"]
    assert queue.requeue_inadmissible(lambda key: False) == 1
    assert queue.ranking.group_of("ns/urgent") == "ns/other"  # the group survives the move
    queue.remove("ns/new")
    assert queue.first is None
    assert queue.ranking.keys(0, 10, None) == ["ns/urgent", "ns/old"]


def test_engine_positions_follow_priority_then_age_in_cluster_and_local_queue() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
        local_queue("a").cluster_queue("cq"),
        local_queue("b").cluster_queue("cq"),
        workload("running").queue("a").created(0).pod_set(cpu="1"),
    )
    engine.run_until_steady(T0)
    for waiting in (
        workload("low").queue("b").priority(1).created(1).pod_set(cpu="1"),
        workload("mid").queue("b").priority(5).created(2).pod_set(cpu="1"),
        workload("high").queue("a").priority(9).created(3).pod_set(cpu="1"),
    ):
        engine.apply(waiting.model())
    engine.run_until_steady(T0)
    queue = engine.view.pending_queue("cq")
    assert queue is not None
    assert queue.ranking.keys(0, 10, queue.first) == ["default/high", "default/mid", "default/low"]
    assert queue.ranking.group_keys("default/b", 0, 10, queue.first) == [
        "default/mid",
        "default/low",
    ]
    assert engine.view.queue_position("default/low") == (3, 3)
    assert engine.view.queue_position("default/running") is None
    assert engine.view.local_queue_target("default", "b") == "cq"
    assert engine.view.local_queue_target("default", "nope") is None
    assert engine.view.pending_queue("nope") is None


USAGES = st.sampled_from([0.0, 1.5, float("inf")])


@settings(max_examples=200, deadline=None)
@given(
    members=st.dictionaries(
        st.sampled_from([f"w{i}" for i in range(12)]),
        st.tuples(
            st.integers(0, 2),
            st.integers(0, 3),
            st.sampled_from(["ns/a", "ns/b", "ns/c"]),
            st.booleans(),
        ),
        max_size=12,
    ),
    usage=st.fixed_dictionaries({"ns/a": USAGES, "ns/b": USAGES, "ns/c": USAGES}),
    sticky_pick=st.integers(0, 12),
)
def test_under_admission_fair_sharing_places_follow_the_pops(
    members: dict[str, tuple[int, int, str, bool]],
    usage: dict[str, float],
    sticky_pick: int,
) -> None:
    """docs/visibility.md#positions: the order by LocalQueue usage is the order of ``pop``."""
    queue = ClusterQueueQueue()
    queue.rank = usage.__getitem__
    for name, (priority, age, group, parked) in members.items():
        (queue.park if parked else queue.push)(order(name, priority, age), group)
    active = sorted(f"ns/{name}" for name, spec in members.items() if not spec[3])
    if sticky_pick < len(active):
        queue.sticky = active[sticky_pick]
    ranking, total = queue.ranking, len(members)
    whole = ranking.keys(0, total + 3, queue.first)
    assert sorted(whole) == sorted(f"ns/{name}" for name in members)
    assert [ranking.position(key, queue.first) for key in whole] == list(range(total))
    for start, stop in ((1, 3), (2, 100), (0, 0), (4, 9)):
        assert ranking.keys(start, stop, queue.first) == whole[start:stop]
    pops = []
    while (key := queue.pop()) is not None:
        pops.append(key)
    assert pops == [key for key in whole if key in active]
