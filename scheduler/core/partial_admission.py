"""Partial admission: the largest pod counts that still fit (docs/scheduling.md#partial-admission).

A pod set with ``minCount < count`` may be admitted with fewer pods.  With
``delta_i = count_i - minCount_i`` and ``D = sum(delta_i)``, step ``k`` of
``[0, D]`` asks for ``count_i - floor(delta_i * k / D)`` pods of each pod
set: step 0 is the full workload, step ``D`` every pod set at its minimum.
The search is a binary search for the smallest step whose attempt succeeds
(the caller's ``attempt`` returns a result, or ``None``), so the counts
shrink only as far as they must.  Below the minimum nothing is tried: the
workload stays pending with the full attempt's reason, and (kuota) its
message says that the minimum was tried too (``minimum_note``).

Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from scheduler.core.workload import PodSetInfo

R = TypeVar("R")


def can_be_partially_admitted(pod_sets: Sequence[PodSetInfo]) -> bool:
    """Whether some pod set may run with fewer pods than it asks for: pure."""
    return any(pod_set.min_count < pod_set.count for pod_set in pod_sets)


def minimum_note(pod_sets: Sequence[PodSetInfo]) -> str:
    """What a pending message adds when not even the minimum counts fit (kuota), or "": pure.

    The message of the full attempt names the full request (as Kueue's
    does); this says that smaller counts were tried too, down to the minimum.
    """
    reducible = [pod_set for pod_set in pod_sets if pod_set.min_count < pod_set.count]
    if not reducible:
        return ""
    minimums = ", ".join(
        f"{pod_set.min_count} of {pod_set.count} pods in pod set {pod_set.name}"
        for pod_set in reducible
    )
    return f"; partial admission: not even the minimum ({minimums}) can be admitted"


def counts_at(pod_sets: Sequence[PodSetInfo], step: int) -> tuple[int, ...]:
    """The pod counts of search step ``step`` (0: full counts): pure."""
    deltas = [pod_set.count - pod_set.min_count for pod_set in pod_sets]
    total = sum(deltas)
    if total == 0:
        return tuple(pod_set.count for pod_set in pod_sets)
    return tuple(
        pod_set.count - delta * step // total
        for pod_set, delta in zip(pod_sets, deltas, strict=True)
    )


def scaled(pod_sets: Sequence[PodSetInfo], counts: Sequence[int]) -> tuple[PodSetInfo, ...]:
    """``pod_sets`` with the given counts: pure."""
    return tuple(pod_set.scaled_to(count) for pod_set, count in zip(pod_sets, counts, strict=True))


def search(
    pod_sets: Sequence[PodSetInfo], attempt: Callable[[tuple[PodSetInfo, ...]], R | None]
) -> R | None:
    """The result of the largest reduced counts ``attempt`` accepts, or None.

    Steps 1 to ``D`` are searched (step 0, the full counts, is the caller's
    own first attempt).  ``attempt`` is called O(log D) times.
    """
    total = sum(pod_set.count - pod_set.min_count for pod_set in pod_sets)
    low, high = 1, total
    best: R | None = None
    while low <= high:
        step = (low + high) // 2
        result = attempt(scaled(pod_sets, counts_at(pod_sets, step)))
        if result is None:
            low = step + 1
        else:
            best = result
            high = step - 1
    return best


__all__ = ["can_be_partially_admitted", "counts_at", "minimum_note", "scaled", "search"]
