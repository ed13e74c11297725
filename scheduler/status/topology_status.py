"""A Workload's status with new topology assignments, after a node replacement (pure).

See docs/concepts.md#topology-aware-scheduling: the pods of a failed node
are placed elsewhere and the admission says where; everything else of the
status stays as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api import objects
from scheduler.core.decisions import PodSetAdmission


def with_topology_assignments(
    workload: Mapping[str, Any], admissions: Sequence[PodSetAdmission]
) -> dict[str, Any] | None:
    """The status with each pod set's ``topologyAssignment`` from ``admissions``; None when
    the Workload records no admission or nothing changes: pure."""
    status = copy.deepcopy(dict(objects.status(workload)))
    admission = status.get("admission")
    if not isinstance(admission, dict):
        return None
    by_name = {item.name: item for item in admissions}
    changed = False
    for item in admission.get("podSetAssignments") or []:
        placed = by_name.get(str(item.get("name"))) if isinstance(item, dict) else None
        if placed is None or placed.topology_assignment is None:
            continue
        encoded = placed.topology_assignment.encoded()
        if item.get("topologyAssignment") != encoded:
            item["topologyAssignment"] = encoded
            changed = True
    return status if changed else None


__all__ = ["with_topology_assignments"]
