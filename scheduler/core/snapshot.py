"""The cycle's view of quota: the live tree plus temporary, rolled-back changes.

Copying every node per cycle would make a cycle O(cluster).  Instead the cycle
works on the live tree and records every *temporary* change (capacity holds
of preemptors without candidates, later the usage of preemptors in flight) in an undo log that
``rollback`` replays backwards at the end of the cycle.  Admissions are
permanent: they are "assumed" into the cache at once (docs/architecture.md#how-a-decision-flows).

``with snapshot.without(usages):`` removes usage for a what-if question (a
preemption trial) and always restores it, even on error.  ``with
snapshot.trial() as trial:`` is the step-by-step form the victim search
needs (remove a candidate, test, give one back, test again); it too restores
everything on exit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from scheduler.core.resource_node import QuotaNode, add_usage, remove_usage
from scheduler.core.resources import FRValues


class Trial:
    """Usage changes of one what-if search; ``Snapshot.trial`` undoes them all on exit."""

    __slots__ = ("_log",)

    def __init__(self) -> None:
        self._log: list[tuple[QuotaNode, tuple[str, str], int]] = []

    def remove(self, node: QuotaNode, usage: FRValues) -> None:
        """Take ``usage`` off ``node`` (a candidate victim is gone, for now)."""
        for fr, amount in usage.items():
            if amount > 0:
                remove_usage(node, fr, amount)
                self._log.append((node, fr, -amount))

    def add(self, node: QuotaNode, usage: FRValues) -> None:
        """Charge ``usage`` to ``node`` (a victim given back, or a preemptor simulated admitted)."""
        for fr, amount in usage.items():
            if amount > 0:
                add_usage(node, fr, amount)
                self._log.append((node, fr, amount))

    def undo(self) -> None:
        while self._log:
            node, fr, amount = self._log.pop()
            if amount > 0:
                remove_usage(node, fr, amount)
            else:
                add_usage(node, fr, -amount)


class Snapshot:
    """Temporary usage changes on the live quota tree, undone by ``rollback``."""

    __slots__ = ("_undo",)

    def __init__(self) -> None:
        self._undo: list[tuple[QuotaNode, tuple[str, str], int]] = []

    def hold(self, node: QuotaNode, usage: FRValues) -> None:
        """Charge ``usage`` to ``node`` until the end of the cycle."""
        for fr, amount in usage.items():
            if amount > 0:
                add_usage(node, fr, amount)
                self._undo.append((node, fr, amount))

    def rollback(self) -> None:
        """Undo every hold, newest first."""
        while self._undo:
            node, fr, amount = self._undo.pop()
            remove_usage(node, fr, amount)

    @staticmethod
    @contextmanager
    def trial() -> Iterator[Trial]:
        """A step-by-step what-if search on the tree; all is undone on exit, even on error."""
        trial = Trial()
        try:
            yield trial
        finally:
            trial.undo()

    @contextmanager
    def without(self, usages: Iterable[tuple[QuotaNode, FRValues]]) -> Iterator[None]:
        """Temporarily remove the usage of ``usages`` (e.g. preemption victims); always restored.

        Amounts are summed per queue first: what a removal gives back up the
        tree depends only on the queue's usage before and after (``remove_usage``
        charges the parent the change of ``max(0, Usage - LocalQuota)``), so one
        removal of the sum leaves the tree exactly as one per workload would, and
        a cycle with thousands of victims walks the tree once per queue.
        """
        totals: dict[tuple[int, tuple[str, str]], tuple[QuotaNode, int]] = {}
        for node, usage in usages:
            for fr, amount in usage.items():
                if amount > 0:
                    key = (id(node), fr)
                    _, total = totals.get(key, (node, 0))
                    totals[key] = (node, total + amount)
        removed: list[tuple[QuotaNode, tuple[str, str], int]] = []
        try:
            for (_, fr), (node, amount) in totals.items():
                remove_usage(node, fr, amount)
                removed.append((node, fr, amount))
            yield
        finally:
            for node, fr, amount in reversed(removed):
                add_usage(node, fr, amount)


__all__ = ["Snapshot", "Trial"]
