"""The actions the job controller decides (:func:`scheduler.jobs.controller.next_action`).

Each is a frozen value :mod:`scheduler.kube.job_actions` performs;
:data:`Action` lists what a job may ask for and :data:`GroupAction` what a
group of objects may ask for besides (its dispatch is checked exhaustive).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.jobs.elastic import (
    RetireSlice,
    ScaleDownWorkload,
)


@dataclass(frozen=True, slots=True)
class CreateWorkload:
    workload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StartJob:
    job: dict[str, Any]
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class SuspendJob:
    job: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class FinishWorkload:
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class RestoreJob:
    """Put the user's pod template back on a suspended Job.

    The API server allows template changes only on a suspended Job whose
    ``status.startTime`` is unset, so a Job that ran gets that cleared first.
    """

    job: dict[str, Any]
    clear_start_time: bool
    message: str


@dataclass(frozen=True, slots=True)
class DeactivateWorkload:
    """``spec.active: false`` on an admitted Workload: record the eviction, then stop it."""

    message: str = "The workload is deactivated"


@dataclass(frozen=True, slots=True)
class ReleaseWorkload:
    """The evicted Job has no pods left: the Workload's quota can be released."""


@dataclass(frozen=True, slots=True)
class WaitForFlavor:
    """The admission names a flavor the scheduler has not seen yet: try again later."""

    flavor: str


@dataclass(frozen=True, slots=True)
class UpdateWorkload:
    """A Workload without quota no longer describes its suspended Job: rebuild its spec.

    ``workload`` is the Workload as read with the spec the Job asks for now;
    the write is guarded by the resourceVersion it was read at.
    """

    workload: dict[str, Any]
    difference: str


@dataclass(frozen=True, slots=True)
class DeleteWorkload:
    """The Workload holds quota for a Job that was suspended and edited: delete it.

    The delete carries the Workload's UID and resourceVersion as
    preconditions; the Job, with no Workload, gets a new one built from it.
    """

    difference: str


@dataclass(frozen=True, slots=True)
class StopPod:
    """Stop a running plain Pod the only way there is: mark it and delete it.

    ``reason`` goes to the Pod's ``TerminationTarget`` condition (Kueue's
    stop reason, ``WorkloadEvictedDueTo<Reason>`` or ``NotAdmitted``).
    """

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class FinalizePod:
    """Take kuota's finalizer off an object whose end is accounted for: ``finalized`` is it
    without the finalizer (a Pod's ``kueue.x-k8s.io/managed``)."""

    finalized: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StartPods:
    """Take the gate off every pod of an admitted group: ``(pod as read, pod started)`` pairs."""

    pods: tuple[tuple[dict[str, Any], dict[str, Any]], ...]
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class StopPods:
    """Stop the running pods of a group (condition ``TerminationTarget``, then delete)."""

    pods: tuple[dict[str, Any], ...]
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class FinalizePods:
    """Take kuota's finalizer off these members of a group: ``(as read, finalized)`` pairs."""

    pods: tuple[tuple[dict[str, Any], dict[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class RemoveExcessPods:
    """Delete pods a group has beyond its Workload's counts: ``(as read, finalized)`` pairs.

    Each loses kuota's finalizer, then is deleted (Kueue's ``ExcessPodDeleted``).
    """

    pods: tuple[tuple[dict[str, Any], dict[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class OwnWorkload:
    """The group's Workload as read with every kept pod among its owners (a replacement's too),
    so that it outlives the pods it was made from; the write is guarded by its
    resourceVersion."""

    workload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SetWaitingForReplacement:
    """Set the group Workload's ``WaitingForReplacementPods`` condition."""

    waiting: bool
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class PropagateToWorkload:
    """The job's admission gates or WorkloadPriorityClass changed: carry them to its Workload.

    ``workload`` is the Workload as read with the job's
    ``kueue.x-k8s.io/admission-gated-by`` annotation and priority; the write
    is guarded by the resourceVersion it was read at.  ``messages``: the
    job's ``UpdatedWorkload`` Events, in Kueue's words.
    """

    workload: dict[str, Any]
    messages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SetReclaimablePods:
    """Write the Workload's ``status.reclaimablePods``: ``(pod set, count)`` pairs, sorted.

    Kueue's field manager ``kueue-reclaimable-pods`` owns the list, so an
    empty one removes it.
    """

    pods: tuple[tuple[str, int], ...]


Action = (
    CreateWorkload
    | UpdateWorkload
    | ScaleDownWorkload
    | DeleteWorkload
    | StartJob
    | SuspendJob
    | RestoreJob
    | FinishWorkload
    | DeactivateWorkload
    | ReleaseWorkload
    | WaitForFlavor
    | StopPod
    | FinalizePod
    | PropagateToWorkload
    | SetReclaimablePods
    | RetireSlice
)
"""Everything the controller may ask for; the executor handles each member (checked exhaustive)."""

GroupAction = (
    Action
    | StartPods
    | StopPods
    | FinalizePods
    | RemoveExcessPods
    | OwnWorkload
    | SetWaitingForReplacement
)
"""What a group of objects (:class:`~scheduler.jobs.protocol.PodGroups`) may ask for besides."""
