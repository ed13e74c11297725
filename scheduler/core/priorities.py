"""Priority classes: the values workloads take their priority from (pure).

See docs/scheduling.md#queue-order.  A Workload names a ``WorkloadPriorityClass``
or a ``PriorityClass`` (``spec.priorityClassRef``); its priority is that
class's value (0 when it names none, or one not known yet), unless its spec
sets one, plus the ``kueue.x-k8s.io/priority-boost`` annotation under the
``PriorityBoost`` feature gate.  The engine re-keys a class's workloads when
its value changes.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.api.refs import PRIORITY_BOOST_ANNOTATION

PriorityRef = tuple[str, str]
"""(kind, name) of a PriorityClass or WorkloadPriorityClass."""


class PriorityClasses:
    """The value of every priority class known, and the boost rule (module docstring)."""

    def __init__(self, *, boost: bool = False) -> None:
        self._values: dict[PriorityRef, int] = {}
        """(kind, name) of a PriorityClass or WorkloadPriorityClass -> its value."""
        self._boost = boost
        """The ``PriorityBoost`` gate: the annotation adds to the priority."""

    def set(self, ref: PriorityRef, value: int | None) -> bool:
        """A priority class came, changed or went (None); whether its value changed."""
        if value is None:
            return self._values.pop(ref, None) is not None
        if self._values.get(ref) == value:
            return False
        self._values[ref] = value
        return True

    def value_of(self, ref: PriorityRef | None) -> int:
        """The value of a priority class reference; 0 when none or unknown: pure.

        Any kind but ``PriorityClass`` names a WorkloadPriorityClass.
        """
        if ref is None:
            return 0
        kind, name = ref
        kind = "PriorityClass" if kind == "PriorityClass" else "WorkloadPriorityClass"
        return self._values.get((kind, name), 0)

    def values(self, kind: str) -> dict[str, int]:
        """Name -> value of every ``PriorityClass`` or ``WorkloadPriorityClass`` known: pure."""
        return {name: value for (k, name), value in self._values.items() if k == kind}

    def boost(self, annotations: Mapping[str, str]) -> int:
        """The priority boost of a Workload's annotations (Kueue's ``PriorityBoost``): pure.

        0 with the gate off, without the annotation, or with a value that is
        not an int32 (the webhook refuses those; as Kueue, the base priority
        is then used).
        """
        if not self._boost:
            return 0
        try:
            boost = int(annotations.get(PRIORITY_BOOST_ANNOTATION, "0"), 10)
        except ValueError:
            return 0
        return boost if -(2**31) <= boost < 2**31 else 0


__all__ = ["PriorityClasses", "PriorityRef"]
