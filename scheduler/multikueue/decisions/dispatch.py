"""What a manager Workload needs, decided from objects as read (pure).

:func:`dispatch` follows Kueue's order for one Workload that holds quota and
carries a MultiKueue check:

a. no quota (released, evicted and released, never reserved) or finished:
   delete every remote copy; being evicted: delete them too, and once they
   are gone and the manager's job is suspended, its copied status says
   nothing runs (kuota releases the quota of an evicted job only when
   nothing runs);
a'. owned by a kind without a MultiKueue adapter
   (:class:`~scheduler.jobs.MultiKueueAdapter`: a JobSet, a Pod): the check
   is ``Rejected`` with Kueue's "No multikueue adapter found for owner kind"
   (admitted, it would run on the manager); a Workload without an owner is
   dispatched as a Workload alone;
b. a remote copy finished: copy the remote job's status to the manager's
   job (the manager's Job controller then finishes the Workload as for any
   job), or finish the Workload directly if it has no job;
c. a remote copy is admitted: delete the copies on the other workers,
   create the job there (the kind's ``remote_copy``), copy its status back,
   and mark the check ``Ready`` with ``status.clusterName``;
d. the check is ``Ready`` but no admitted copy is visible: evicted on its
   worker (preempted there), ``Retry`` with Kueue's message; if the worker
   that ran it is unreachable, wait ``workerLostTimeout`` from when it was
   lost, then ``Retry``; if it answered and the copy is gone, ``Retry`` at
   once (the scheduler then releases the quota and requeues);
e. the check is ``Pending``: copy the Workload to the nominated workers
   (``status.nominatedClusterNames``) that have no copy, and remove the
   copies from the others.  Who is nominated is ``multiKueue.dispatcherName``'s
   business: Kueue's default, all at once, nominates every active worker;
   the incremental dispatcher nominates ``stepSize`` workers (3 by default)
   in the MultiKueueConfig's order, and ``stepSize`` more after each round of
   five minutes without an admission (Kueue's rule: the nominations
   accumulate; a round starts again after the Workload lost its quota); any
   other name is an external dispatcher's, which sets the nominations
   itself.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import (
    ADMITTED,
    EVICTED,
    FINISHED,
    JOB_UID_LABEL,
    KUEUE_GROUP,
    MULTIKUEUE_ORIGIN_LABEL,
)
from scheduler.jobs import Integration, MultiKueueAdapter, capability, integration_for
from scheduler.multikueue.decisions.health import is_multikueue_check

ADMITTING_REMOTE_LOST = "Admitting remote lost"
ADMITTING_REMOTE_GONE = "Admitting remote no longer exists"
DEFAULT_ORIGIN = "multikueue"
DEFAULT_WORKER_LOST_TIMEOUT = timedelta(minutes=15)
INCREMENTAL_ROUND = timedelta(minutes=5)
"""How long the incremental dispatcher waits for an admission before nominating more workers."""


@dataclass(frozen=True, slots=True)
class Remote:
    """What one reachable worker holds of a Workload (only objects of this manager's origin)."""

    workload: Mapping[str, Any] | None = None
    job: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CreateRemoteWorkload:
    cluster: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CreateRemoteJob:
    cluster: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DeleteRemote:
    """Delete the Workload and the Job of this Workload on ``cluster`` (whichever exist)."""

    cluster: str


@dataclass(frozen=True, slots=True)
class SyncJobStatus:
    """Replace the manager's Job ``status`` with the remote one's."""

    status: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SetCheck:
    """Set the Workload's MultiKueue check to ``state`` (and where it runs, when Ready)."""

    state: str
    message: str
    cluster_name: str | None = None


@dataclass(frozen=True, slots=True)
class Nominate:
    clusters: tuple[str, ...]
    new_round: bool = False
    """The incremental dispatcher added workers: a round of :data:`INCREMENTAL_ROUND` starts."""


@dataclass(frozen=True, slots=True)
class AllAtOnce:
    """Kueue's default dispatcher: every active worker of the config is nominated."""


@dataclass(frozen=True, slots=True)
class Incremental:
    """Kueue's incremental dispatcher (``incrementalDispatcherConfig.stepSize``)."""

    step: int = 3
    members: tuple[str, ...] = ()
    """The MultiKueueConfig's clusters, in its order."""
    round_started: datetime | None = None
    """When this manager last nominated workers for the Workload (None: never, or forgotten)."""
    in_config_order: bool = True
    """Nominate in the config's order (gate MultiKueueIncrementalDispatcherRespectConfigOrder),
    else alphabetically."""


@dataclass(frozen=True, slots=True)
class External:
    """Another controller's dispatcher: it sets ``nominatedClusterNames``, kuota copies there."""


Dispatching = AllAtOnce | Incremental | External


@dataclass(frozen=True, slots=True)
class ClearNomination:
    """Remove ``status.clusterName`` and ``nominatedClusterNames``: the Workload is to be
    dispatched anew (Kueue clears both when it evicts)."""


@dataclass(frozen=True, slots=True)
class FinishLocal:
    reason: str
    message: str


Action = (
    CreateRemoteWorkload
    | CreateRemoteJob
    | DeleteRemote
    | SyncJobStatus
    | SetCheck
    | Nominate
    | ClearNomination
    | FinishLocal
)
"""Everything :func:`dispatch` may ask for; the controller performs each member."""


@dataclass(frozen=True, slots=True)
class DispatchInput:
    """Everything :func:`dispatch` reads about one manager Workload."""

    workload: Mapping[str, Any]
    check: str
    """The name of the Workload's MultiKueue admission check."""
    job: Mapping[str, Any] | None
    """The manager's object that owns the Workload (a batch Job), as read."""
    adapter: MultiKueueAdapter | None = None
    """The owner's kind, which makes its copy on a worker (:func:`dispatchable_owner`)."""
    remotes: Mapping[str, Remote] = field(default_factory=dict)
    """Per reachable worker of the check's config: what it holds."""
    unreachable: Sequence[str] = ()
    """Workers of the config that did not answer."""
    lost_since: Mapping[str, datetime] = field(default_factory=dict)
    now: datetime | None = None
    worker_lost_timeout: timedelta = DEFAULT_WORKER_LOST_TIMEOUT
    origin: str = DEFAULT_ORIGIN
    dispatching: Dispatching = AllAtOnce()


def check_state(workload: Mapping[str, Any], check: str) -> Mapping[str, Any] | None:
    """The ``status.admissionChecks`` entry of ``check``, if the Workload has one: pure."""
    for entry in objects.status(workload).get("admissionChecks") or []:
        if isinstance(entry, Mapping) and entry.get("name") == check:
            return entry
    return None


def dispatch(given: DispatchInput) -> list[Action]:
    """The writes one manager Workload needs now (module docstring, a–e): pure."""
    workload = given.workload
    present = [name for name, remote in given.remotes.items() if remote.workload or remote.job]
    forget = _nominated(workload)
    if objects.is_finished(workload):
        return [DeleteRemote(name) for name in present]
    if not objects.has_quota_reservation(workload):
        return [DeleteRemote(name) for name in present] + forget
    if objects.is_evicting(workload):
        return _stop(given, present) + forget
    entry = check_state(workload, given.check) or {}
    state = str(entry.get("state") or "Pending")
    unsupported = unsupported_owner_kind(workload)
    if unsupported is not None:
        # Admitted as it is, the owner would run on the manager: refuse instead (Kueue's rule).
        if state != "Pending" or present:
            return [DeleteRemote(name) for name in present]
        return [SetCheck("Rejected", f'No multikueue adapter found for owner kind "{unsupported}"')]
    for remote in given.remotes.values():
        if remote.workload is not None and objects.is_true(remote.workload, FINISHED):
            finished = objects.condition(remote.workload, FINISHED) or {}
            if given.job is None:
                return [FinishLocal(str(finished.get("reason")), str(finished.get("message")))]
            if remote.job is not None and not _suspended(given.job):
                wanted = dict(objects.status(remote.job))
                if wanted != dict(objects.status(given.job)):
                    return [SyncJobStatus(wanted)]
            return []
    admitting = next(
        (
            name
            for name, remote in given.remotes.items()
            if remote.workload is not None and objects.is_true(remote.workload, ADMITTED)
        ),
        None,
    )
    if admitting is not None:
        return _converge(given, admitting, state)
    if state == "Ready":
        where = str(objects.status(workload).get("clusterName") or "")
        there = given.remotes.get(where, Remote()).workload
        if there is not None and objects.is_true(there, EVICTED):
            return [
                SetCheck(
                    "Retry",
                    f'Workload evicted on worker cluster: "{where}", resetting for '
                    f're-admission. Previously: "{state}"',
                )
            ]
        if where and where in given.unreachable:
            since = given.lost_since.get(where)
            if since is None or given.now is None or given.now - since < given.worker_lost_timeout:
                return []
            return [SetCheck("Retry", _previously(ADMITTING_REMOTE_LOST, state))]
        return [SetCheck("Retry", _previously(ADMITTING_REMOTE_GONE, state))]
    if state != "Pending":
        return []
    if objects.status(workload).get("clusterName"):
        return [ClearNomination()]  # left from an earlier dispatch: start again
    if not isinstance(given.dispatching, AllAtOnce):
        return _to_nominated(given)
    actions: list[Action] = [
        CreateRemoteWorkload(name, remote_workload(workload, given.origin))
        for name, remote in given.remotes.items()
        if remote.workload is None
    ]
    nominated = tuple(sorted(given.remotes))
    current = objects.status(workload).get("nominatedClusterNames") or []
    if nominated and sorted(current) != list(nominated):
        actions.append(Nominate(nominated))
    return actions


def _to_nominated(given: DispatchInput) -> list[Action]:
    """Step e for the incremental and external dispatchers: copies on the nominated workers."""
    current = [
        str(name)
        for name in objects.status(given.workload).get("nominatedClusterNames") or []
        if isinstance(name, str)
    ]
    actions: list[Action] = []
    dispatching = given.dispatching
    if isinstance(dispatching, Incremental) and _round_over(dispatching, given.now):
        left = [name for name in dispatching.members if name not in current]
        if not dispatching.in_config_order:
            left.sort()
        added = left[: max(1, dispatching.step)]
        if added:
            current = current + added
            actions.append(Nominate(tuple(current), new_round=True))
    for name, remote in given.remotes.items():
        if name in current and remote.workload is None:
            actions.append(
                CreateRemoteWorkload(name, remote_workload(given.workload, given.origin))
            )
        elif name not in current and (remote.workload or remote.job):
            actions.append(DeleteRemote(name))
    return actions


def _round_over(dispatching: Incremental, now: datetime | None) -> bool:
    started = dispatching.round_started
    return started is None or now is None or now - started > INCREMENTAL_ROUND


def _converge(given: DispatchInput, admitting: str, state: str) -> list[Action]:
    """A worker admitted the copy: keep only it, give it the Job, mark the check Ready."""
    actions: list[Action] = [
        DeleteRemote(name)
        for name, remote in given.remotes.items()
        if name != admitting and (remote.workload or remote.job)
    ]
    remote = given.remotes[admitting]
    if given.job is not None and given.adapter is not None:
        if remote.job is None:
            copied = given.adapter.remote_copy(
                given.job, objects.name(given.workload), given.origin
            )
            actions.append(CreateRemoteJob(admitting, copied))
        elif not _suspended(given.job):
            wanted = dict(objects.status(remote.job))
            if wanted != dict(objects.status(given.job)):
                actions.append(SyncJobStatus(wanted))
    if state not in ("Ready", "Retry", "Rejected"):
        actions.append(
            SetCheck("Ready", f'The workload was admitted on "{admitting}"', cluster_name=admitting)
        )
    return actions


def _stop(given: DispatchInput, present: list[str]) -> list[Action]:
    """The manager evicts the Workload: the remote run ends, and the manager's job says so.

    kuota gives the quota back once the (suspended) manager's job runs
    nothing; what it ran was the worker's, so once the worker's objects are
    gone its status says nothing runs (the kind's ``stopped_status``).
    """
    actions: list[Action] = [DeleteRemote(name) for name in present]
    job, adapter = given.job, given.adapter
    if job is not None and adapter is not None and _suspended(job) and not present:
        stopped = adapter.stopped_status(objects.status(job))
        if stopped is not None:
            actions.append(SyncJobStatus(stopped))
    return actions


def _nominated(workload: Mapping[str, Any]) -> list[Action]:
    """A ClearNomination when the Workload still names where it was sent."""
    status = objects.status(workload)
    if status.get("clusterName") or status.get("nominatedClusterNames"):
        return [ClearNomination()]
    return []


def _previously(message: str, state: str) -> str:
    return f'{message}, Previously: "{state}"'


def _suspended(job: Mapping[str, Any]) -> bool:
    return objects.spec(job).get("suspend") is True


def remote_workload(workload: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """The copy of a manager Workload created on a worker (no owner, no status): pure."""
    meta = objects.metadata_for_copy(workload)
    meta["labels"].pop(JOB_UID_LABEL, None)
    meta["labels"][MULTIKUEUE_ORIGIN_LABEL] = origin
    return {
        "apiVersion": str(workload.get("apiVersion") or f"{KUEUE_GROUP}/v1beta2"),
        "kind": "Workload",
        "metadata": meta,
        "spec": copy.deepcopy(dict(objects.spec(workload))),
    }


def check_entries(
    workload: Mapping[str, Any], check: str, action: SetCheck, now: str
) -> list[dict[str, Any]]:
    """``status.admissionChecks`` with ``check`` set as ``action`` says: pure."""
    entries = [
        dict(e)
        for e in objects.status(workload).get("admissionChecks") or []
        if isinstance(e, Mapping)
    ]
    for entry in entries:
        if entry.get("name") == check:
            if entry.get("state") != action.state:
                entry["lastTransitionTime"] = now
            entry["state"] = action.state
            entry["message"] = action.message
            return entries
    entries.append(
        {"name": check, "state": action.state, "message": action.message, "lastTransitionTime": now}
    )
    return entries


def multikueue_check_of(
    workload: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The name of the Workload's MultiKueue admission check (``checks``: by name): pure."""
    for entry in objects.status(workload).get("admissionChecks") or []:
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and name in checks and is_multikueue_check(checks[name]):
            return name
    return None


def _adapter_of(ref: Mapping[str, Any]) -> tuple[Integration, MultiKueueAdapter] | None:
    integration = integration_for(ref)
    adapter = capability(integration, MultiKueueAdapter) if integration is not None else None
    return (integration, adapter) if integration is not None and adapter is not None else None


def unsupported_owner_kind(workload: Mapping[str, Any]) -> str | None:
    """The kind of a controlling owner MultiKueue cannot dispatch, or None: pure.

    kuota's MultiKueue creates, on workers, the kinds with a MultiKueue adapter
    (a batch/v1 Job); a Workload without an owner is dispatched as a Workload
    alone.  Any other owner (a JobSet, a Pod) would be started on the manager
    once the check is Ready, the opposite of what MultiKueue is for, so its
    check is ``Rejected`` with Kueue's message, e.g.
    ``jobset.x-k8s.io/v1alpha2, Kind=JobSet``.
    """
    ref = objects.controller_reference(workload)
    if ref is None or _adapter_of(ref) is not None:
        return None
    return f"{ref.get('apiVersion') or ''}, Kind={ref.get('kind') or ''}"


def dispatchable_owner(
    workload: Mapping[str, Any],
) -> tuple[Integration, MultiKueueAdapter, str] | None:
    """The owner a manager Workload's remote run copies: its kind, adapter and name: pure."""
    for ref in objects.owner_references(workload):
        found = _adapter_of(ref)
        name = str(ref.get("name") or "")
        if found is not None and name:
            return (*found, name)
    return None


def is_ours(obj: Mapping[str, Any], origin: str) -> bool:
    """Whether a worker's object was made by this manager (origin label): pure."""
    return objects.label(obj, MULTIKUEUE_ORIGIN_LABEL) == origin
