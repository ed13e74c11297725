"""Kueue's ``statefulset`` framework: a queued StatefulSet's pods form one pod group.

:mod:`.integration` is the class (the webhook's marks, the scheduler's part);
:mod:`.replicas` the Workload made from the StatefulSet, the pods placed in
its group and the hold while it is scaled to zero.
"""

from scheduler.jobs.statefulset.integration import (
    STATEFULSET,
    STATEFULSET_FRAMEWORK,
    StatefulSet,
    propagate,
)
from scheduler.jobs.statefulset.replicas import group_name, replicas

__all__ = [
    "STATEFULSET",
    "STATEFULSET_FRAMEWORK",
    "StatefulSet",
    "group_name",
    "propagate",
    "replicas",
]
