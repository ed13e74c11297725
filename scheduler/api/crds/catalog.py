"""Every kind kuota describes, and the ``v1beta2`` description of each.

The CRD generator renders every version of every kind listed here; the
webhook's known-field shapes and the parser's model bindings read the
storage version (``v1beta2``) of the same descriptions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from scheduler.api.crds.definition import KindDefinition
from scheduler.api.crds.kinds_other import (
    admission_check,
    multikueue_cluster,
    multikueue_config,
    topology,
    workload_priority_class,
)
from scheduler.api.crds.kinds_queues import (
    cluster_queue,
    cohort,
    local_queue,
    resource_flavor,
)
from scheduler.api.crds.kinds_workload import workload
from scheduler.api.crds.nodes import ObjectNode
from scheduler.api.refs import HUB_VERSION

KIND_BUILDERS: tuple[Callable[[], KindDefinition], ...] = (
    resource_flavor,
    cluster_queue,
    local_queue,
    cohort,
    workload,
    workload_priority_class,
    admission_check,
    multikueue_config,
    multikueue_cluster,
    topology,
)
"""Every kind kuota installs, in installation order."""


@cache
def definitions() -> dict[str, KindDefinition]:
    """Every kind's definition by kind name (built once; definitions are immutable)."""
    return {definition.kind: definition for definition in (build() for build in KIND_BUILDERS)}


def hub_schema(kind: str) -> ObjectNode:
    """The description of ``kind`` in the storage version ``v1beta2``."""
    for version in definitions()[kind].versions:
        if version.name == HUB_VERSION:
            return version.schema
    raise KeyError(f"{kind} has no {HUB_VERSION} version")
