"""The chaos scenario's reporting and waiting helpers (e2e/chaos/scenario.py), without a
cluster: what a replica's last words show, when a wait gives up, the burst's shape."""

from __future__ import annotations

import json
from collections import Counter

from e2e.chaos.scenario import Queues, chaos_jobs, last_words, until_stalled


def test_last_words_show_the_exception_of_a_traceback_and_the_last_lines() -> None:
    crash = {
        "time": "t1",
        "level": "error",
        "msg": "a main task failed",
        "exception": "Traceback (most recent call last):\n  File x\nClientConnectorError: refused",
    }
    log = "\n".join(
        ['{"level": "info", "msg": "old"}', json.dumps(crash), *[f"line {i}" for i in range(4)]]
    )
    assert last_words(log) == [
        "t1 a main task failed: ClientConnectorError: refused",
        "line 0",
        "line 1",
        "line 2",
        "line 3",
    ]
    assert last_words("x" * 1000, width=10) == ["xxxxxxxxxx ..."]


async def test_a_wait_ends_when_nothing_moves_and_says_so() -> None:
    assert await until_stalled(lambda: True, progress=lambda: 0, timeout=5, stall=1) == ""
    outcome = await until_stalled(lambda: False, progress=lambda: 0, timeout=30, stall=1)
    assert "stalled" in outcome
    ticks = iter(range(1000))
    outcome = await until_stalled(lambda: False, progress=lambda: next(ticks), timeout=2, stall=1)
    assert "deadline of 2s passed" in outcome


def test_the_burst_borrows_first_then_mixes_queues_and_priorities() -> None:
    queues = Queues("f", "c", ("cq-a", "cq-b"), priorities=("low", "high"))
    jobs = chaos_jobs(90, queues, seed=3)
    assert jobs == chaos_jobs(90, queues, seed=3), "reproducible from the seed"
    labels = [job["metadata"]["labels"] for job in jobs]
    first = Counter(
        (lab["kueue.x-k8s.io/queue-name"], lab["kueue.x-k8s.io/priority-class"])
        for lab in labels[:30]
    )
    assert first == {("queue-a", "low"): 30}
    rest = Counter(lab["kueue.x-k8s.io/queue-name"] for lab in labels[30:])
    assert rest["queue-a"] > 10 and rest["queue-b"] > 10
    assert 10 < sum(lab["kueue.x-k8s.io/priority-class"] == "high" for lab in labels[30:]) < 40
