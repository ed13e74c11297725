"""The ``custom_*`` label values of the objects a series is about (docs/metrics.md#custom-labels).

A series of a ClusterQueue carries the values its ClusterQueue's labels (or
annotations) give the ``metrics.customLabels`` of kind ``ClusterQueue``; a
LocalQueue's, a Cohort's and a Workload's likewise.  The values are read
from the objects as they are when the series is recorded (a counter) or
read (a gauge), so a gauge follows a relabelled queue at once and a counter
keeps the values it was counted under, as in Kueue.  An object not known
(yet, or any more) has empty values.

The objects come from a lookup the adapter supplies; everything else here
is pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.api import objects
from scheduler.api.custom_labels import CustomLabels, SourceKind

Lookup = Callable[[SourceKind, str], Mapping[str, Any] | None]
"""The object of a kind by reference (a queue's or cohort's name, ``namespace/name``)."""


def _nothing(kind: SourceKind, ref: str) -> Mapping[str, Any] | None:
    return None


class CustomValues:
    """``custom_*`` label values by object (module docstring)."""

    def __init__(self, labels: CustomLabels | None = None, lookup: Lookup = _nothing) -> None:
        self.labels = labels or CustomLabels()
        self.lookup = lookup

    def of(self, kind: SourceKind, ref: str) -> dict[str, str]:
        """Label name -> value for the object ``ref`` of ``kind`` (nothing without entries)."""
        if not self.labels.of_kind(kind):
            return {}
        found = self.lookup(kind, ref)
        if found is None:
            return self.labels.unknown(kind)
        return self.labels.values(kind, objects.labels(found), objects.annotations(found))

    def values(self, kind: SourceKind, ref: str) -> tuple[str, ...]:
        """The values alone, in series order."""
        return tuple(self.of(kind, ref).values())


__all__ = ["CustomValues", "Lookup"]
