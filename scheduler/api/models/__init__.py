"""Typed, immutable models of every ``kueue.x-k8s.io/v1beta2`` kind.

Built by ``scheduler.api.parse`` from raw dicts (defaults applied, types
checked); read by validation, the engine, the webhook and the CLI.  One
module per group of kinds; everything is re-exported here.
"""

from __future__ import annotations

from scheduler.api.models.common import *  # noqa: F401,F403
from scheduler.api.models.others import *  # noqa: F401,F403
from scheduler.api.models.others import (
    AdmissionCheck,
    MultiKueueCluster,
    MultiKueueConfig,
    Topology,
    WorkloadPriorityClass,
)
from scheduler.api.models.queues import *  # noqa: F401,F403
from scheduler.api.models.queues import ClusterQueue, Cohort, LocalQueue, ResourceFlavor
from scheduler.api.models.workload import *  # noqa: F401,F403
from scheduler.api.models.workload import Workload

KueueObject = (
    ResourceFlavor
    | ClusterQueue
    | LocalQueue
    | Cohort
    | Workload
    | WorkloadPriorityClass
    | AdmissionCheck
    | MultiKueueConfig
    | MultiKueueCluster
    | Topology
)
"""Any parsed ``kueue.x-k8s.io/v1beta2`` object."""
