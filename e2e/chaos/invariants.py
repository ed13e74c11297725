"""The invariants a chaos scenario must never break, checked on every watch event (pure).

:class:`InvariantChecker` is fed the events of four watches (Workloads, Jobs,
Pods, ClusterQueues) as they arrive, one call per event, and after each one checks:

- **quota**: no ClusterQueue uses more of a flavor's resource than its
  ``nominalQuota`` plus its ``borrowingLimit`` (or than its nominal quota when
  it has no cohort), and no cohort uses more than its members lend
  (``sum(max(0, usage - guaranteed)) <= sum(lendable)``, where a member lends
  its ``lendingLimit``, or all its nominal quota when it has none).  Usage is
  derived from the Workloads' own admission records (a Workload holds quota
  while it has ``status.admission``, ``QuotaReserved=True`` and is not
  ``Finished``); the ClusterQueues' reported ``flavorsReservation`` is checked
  against the same limits on every ClusterQueue event;
- **admission**: no Workload is admitted (``QuotaReserved`` turns True) a second
  time without an eviction in between, and none loses its admission without
  one (while not finished);
- **jobs**: no Job runs (``suspend`` false, neither ``Complete`` nor ``Failed``)
  while none of its Workloads holds an admission;
- **pods**: no pod of a Job is live (not ``Succeeded`` or ``Failed``, still
  there: running, or in its termination grace period) while none of the
  Job's Workloads holds quota (reserved and not ``Finished``): the quota of
  an evicted Job is released only once its last pod has stopped.

The first two need one watch each; a watch delivers in resourceVersion order,
so each event is checked against the state right after it.  The last two join
two watches, which arrive independently: a Job (or Pod) event can overtake the
Workload event written just before it.  Both kinds live in one etcd, whose
revision (the resourceVersion) orders every write, so the checker keeps each
Job's and Workload's history by revision and checks a Job only up to the
revision both watches have delivered (``advance``): no false alarm from
watch skew, and none missed.

After a lost watch (an API server restart) a list replaces the missed events; it
shows end states only, so it is judged conservatively (:meth:`InvariantChecker.observe`):
a violation is reported only when the list proves it.

Every violation keeps the event that showed it.  Nothing here does I/O, reads
a clock or knows about kuota's internals: it reads Kueue's API fields only.
The watcher passes each event's arrival time (``at``), from which the
checker reports how long evicted Workloads kept their quota
(:attr:`InvariantChecker.release_waits`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.quantity import Quantity

WORKLOAD, JOB, POD, CLUSTER_QUEUE = "Workload", "Job", "Pod", "ClusterQueue"
STREAMS = (WORKLOAD, JOB, POD, CLUSTER_QUEUE)
FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class Violation:
    kind: str
    """``cq-over-quota``, ``cohort-over-quota``, ``reported-over-quota``,
    ``admitted-twice``, ``admission-lost``, ``job-runs-unadmitted``,
    ``pod-live-without-quota``."""
    subject: str
    detail: str
    event: str
    """The watch event that showed it (stream, type, key, resourceVersion, what it said)."""

    def __str__(self) -> str:
        return f"[{self.kind}] {self.subject}: {self.detail}\n    shown by: {self.event}"


# -- reading objects (Kueue's API fields only) -----------------------------------------------


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return None


def condition_true(obj: Mapping[str, Any], kind: str) -> bool:
    found = _condition(obj, kind)
    return found is not None and found.get("status") == "True"


def reserves(workload: Mapping[str, Any]) -> bool:
    """Holds a quota reservation: ``status.admission`` and ``QuotaReserved=True``."""
    return bool((workload.get("status") or {}).get("admission")) and condition_true(
        workload, "QuotaReserved"
    )


def holds_quota(workload: Mapping[str, Any]) -> bool:
    """Counts against its ClusterQueue: reserved and not ``Finished``."""
    return reserves(workload) and not condition_true(workload, "Finished")


def job_runs(job: Mapping[str, Any]) -> bool:
    """Unsuspended and not finished (a missing ``suspend`` is false, as the API defaults it)."""
    suspended = (job.get("spec") or {}).get("suspend") is True
    return not suspended and not (condition_true(job, "Complete") or condition_true(job, "Failed"))


def pod_live(pod: Mapping[str, Any]) -> bool:
    """Not terminated: running, pending, or in its termination grace period."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def nanos(value: Any) -> int:
    return Quantity.parse(str(value)).nanos


def workload_usage(workload: Mapping[str, Any]) -> dict[FlavorResource, int]:
    """``(flavor, resource) -> nanos`` of an admission record."""
    usage: Counter[FlavorResource] = Counter()
    admission = (workload.get("status") or {}).get("admission") or {}
    for pod_set in admission.get("podSetAssignments") or []:
        flavors = pod_set.get("flavors") or {}
        for resource, amount in (pod_set.get("resourceUsage") or {}).items():
            usage[(str(flavors.get(resource, "?")), resource)] += nanos(amount)
    return dict(usage)


def owner_uid(obj: Mapping[str, Any]) -> str | None:
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if reference.get("kind") == "Job":
            return str(reference.get("uid"))
    return None


def _fmt(amount: int) -> str:
    return f"{amount / 1e6:g}m"


@dataclass(frozen=True)
class Limit:
    nominal: int
    borrowing: int | None
    lending: int | None

    @property
    def lendable(self) -> int:
        return self.nominal if self.lending is None else min(self.lending, self.nominal)

    @property
    def guaranteed(self) -> int:
        return self.nominal - self.lendable


@dataclass(frozen=True)
class QueueSpec:
    name: str
    cohort: str | None
    limits: dict[FlavorResource, Limit]

    @staticmethod
    def read(cluster_queue: Mapping[str, Any]) -> QueueSpec:
        spec = cluster_queue.get("spec") or {}
        limits = {}
        for group in spec.get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                for resource in flavor.get("resources") or []:
                    borrowing, lending = (
                        resource.get("borrowingLimit"),
                        resource.get("lendingLimit"),
                    )
                    limits[(str(flavor["name"]), str(resource["name"]))] = Limit(
                        nominal=nanos(resource.get("nominalQuota", 0)),
                        borrowing=None if borrowing is None else nanos(borrowing),
                        lending=None if lending is None else nanos(lending),
                    )
        cohort = spec.get("cohortName") or spec.get("cohort")
        return QueueSpec(str(cluster_queue["metadata"]["name"]), cohort or None, limits)

    def ceiling(self, limit: Limit) -> int | None:
        """The most this queue may use of one flavor's resource on its own account: nominal
        plus borrowing limit; nominal without a cohort; None when only the cohort bounds it."""
        if limit.borrowing is not None:
            return limit.nominal + limit.borrowing
        return limit.nominal if self.cohort is None else None


def describe(stream: str, event_type: str, obj: Mapping[str, Any]) -> str:
    """One line naming an event and the fields the invariants read."""
    metadata = obj.get("metadata") or {}
    name = "/".join(filter(None, [metadata.get("namespace"), metadata.get("name")]))
    status = obj.get("status") or {}
    said: dict[str, Any] = {}
    if stream == WORKLOAD:
        admission = status.get("admission") or {}
        said["admission"] = admission.get("clusterQueue")
        said["usage"] = {f"{f}/{r}": _fmt(n) for (f, r), n in workload_usage(obj).items()}
    elif stream == JOB:
        said["suspend"] = (obj.get("spec") or {}).get("suspend")
    elif stream == POD:
        said["phase"] = status.get("phase")
        said["deleting"] = bool(metadata.get("deletionTimestamp"))
    elif stream == CLUSTER_QUEUE:
        said["flavorsReservation"] = status.get("flavorsReservation")
    said["conditions"] = {
        c.get("type"): f"{c.get('status')}/{c.get('reason')}"
        for c in status.get("conditions") or []
        if stream not in (CLUSTER_QUEUE, POD)
    }
    return (
        f"{stream} {event_type} {name} rv={metadata.get('resourceVersion')} "
        f"{json.dumps(said, sort_keys=True)}"
    )


# -- per-object histories, by revision ---------------------------------------------------------


@dataclass
class _Step:
    rv: int
    on: bool
    event: str


@dataclass
class _History:
    """A boolean over revisions: its value changes only at the recorded steps."""

    steps: list[_Step] = field(default_factory=list)

    def record(self, rv: int, on: bool, event: str) -> None:
        if not self.steps or self.steps[-1].on != on:
            self.steps.append(_Step(rv, on, event))

    def at(self, rv: int) -> bool:
        value = False
        for step in self.steps:
            if step.rv > rv:
                break
            value = step.on
        return value


@dataclass
class _WorkloadTrack:
    key: str
    job: str | None = None
    cluster_queue: str | None = None
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    reserved: bool = False
    finished: bool = False
    admissions: int = 0
    evicted_since_admission: bool = False
    evicted_at: float | None = None
    """When this admission's eviction was seen (the watcher's clock), until its release."""
    eviction_marks: str = ""
    """The Evicted/Preempted/Requeued conditions at the last admission: a change shows an
    eviction that happened while the watch was down (a relist delivers the end state only)."""
    admitted_by: str = ""
    last: str = ""
    history: _History = field(default_factory=_History)
    """Whether it reserves quota (an admission record; finished ones too)."""
    holding: _History = field(default_factory=_History)
    """Whether it holds quota: reserved and not finished (the engine released a finished one)."""


def _eviction_marks(workload: Mapping[str, Any]) -> str:
    marks = []
    for kind in ("Evicted", "Preempted", "Requeued"):
        found = _condition(workload, kind)
        if found is not None:
            marks.append(
                f"{kind}={found.get('status')}@{found.get('lastTransitionTime')}:"
                f"{found.get('message')}"
            )
    return "|".join(marks)


@dataclass
class _PodTrack:
    key: str
    job: str | None
    history: _History = field(default_factory=_History)
    checked_upto: int = 0
    uncovered_since: int | None = None


@dataclass
class _JobTrack:
    key: str
    uid: str
    complete: bool = False
    runs: bool = False
    history: _History = field(default_factory=_History)
    checked_upto: int = 0
    unadmitted_since: int | None = None
    last: str = ""


class InvariantChecker:
    """Feed it every event of the three watches (:meth:`observe`) and their progress
    (:meth:`advance`); read :attr:`violations`."""

    def __init__(self, namespace: str, cluster_queues: Iterable[str]) -> None:
        self.namespace = namespace
        self.cluster_queue_names = set(cluster_queues)
        self.queues: dict[str, QueueSpec] = {}
        self.reported: dict[str, Mapping[str, Any]] = {}
        self.workloads: dict[str, _WorkloadTrack] = {}
        self.jobs: dict[str, _JobTrack] = {}
        self.pods: dict[str, _PodTrack] = {}
        self._dirty_pods: set[str] = set()
        self.watermarks: dict[str, int] = {stream: 0 for stream in STREAMS}
        self.violations: list[Violation] = []
        self.events: Counter[str] = Counter()
        self.checks = 0
        self.evictions = 0
        """Evictions seen (``Evicted=True`` on an admitted Workload): preemptions, mostly."""
        self._seen: set[tuple[str, str, str]] = set()
        self._dirty_jobs: set[str] = set()
        self._workloads_of: dict[str, set[str]] = {}
        """Job uid -> uids of the Workloads it owns."""
        self.peak: dict[str, dict[FlavorResource, int]] = {}
        self._relisting = False
        self._deferred_quota: set[str] = set()
        self.release_waits: list[float] = []
        """Seconds from an eviction seen to its quota released (the watcher's clock)."""
        self._at: float | None = None

    # -- input ----------------------------------------------------------------------------
    def observe(
        self,
        stream: str,
        event_type: str,
        obj: Mapping[str, Any],
        *,
        relisted: bool = False,
        at: float | None = None,
    ) -> None:
        """One watch event (``ADDED``/``MODIFIED``/``DELETED``) of ``stream``.

        ``relisted``: the event comes from a list (the first, or one after the watch could
        not resume), not from the watch: it gives the object's state at the list, not the
        moment it changed, and the list's objects arrive in name order, not in the order
        they changed.  So the quota check waits for the whole list (the next watch event or
        :meth:`advance`), and the Job check places the change where it is least damning:
        a Job that runs (or a Workload that lost its admission) from the object's own
        revision, a Job that stopped (or a Workload admitted) from the moment the watch
        was lost.  What the list cannot show is not guessed at.
        """
        self._relisting = relisted
        self._at = at
        if not relisted:
            self._check_deferred_quota()
        metadata = obj.get("metadata") or {}
        if stream == CLUSTER_QUEUE:
            if metadata.get("name") not in self.cluster_queue_names:
                return
        elif metadata.get("namespace") != self.namespace:
            return
        self.events[stream] += 1
        event = describe(stream, event_type, obj)
        if stream == WORKLOAD:
            self._workload(event_type, obj, event)
        elif stream == JOB:
            self._job(event_type, obj, event)
        elif stream == POD:
            self._pod(event_type, obj, event)
        else:
            self._cluster_queue(event_type, obj, event)
        self._check_jobs()
        self._check_pods()

    def advance(self, stream: str, resource_version: str | int | None) -> None:
        """``stream`` has delivered every event up to ``resource_version``."""
        if resource_version in (None, ""):
            return
        self.watermarks[stream] = max(self.watermarks[stream], int(resource_version))
        self._check_deferred_quota()
        self._check_jobs()
        self._check_pods()

    def _check_deferred_quota(self) -> None:
        deferred, self._deferred_quota = self._deferred_quota, set()
        for cluster_queue in sorted(deferred):
            self._check_quota(
                cluster_queue, f"the list of Workloads after a lost watch: {cluster_queue}"
            )

    def _step_rv(self, stream: str, rv: int, damning: bool) -> int:
        """Where a change goes in a history: its revision, or for a relisted change that
        would clear a Job, the moment the watch was lost (see :meth:`observe`)."""
        if self._relisting and not damning:
            return min(rv, self.watermarks[stream] + 1)
        return rv

    # -- state read by scenarios --------------------------------------------------------
    def usage(self, cluster_queue: str) -> dict[FlavorResource, int]:
        total: Counter[FlavorResource] = Counter()
        for track in self.workloads.values():
            if track.cluster_queue == cluster_queue and track.reserved and not track.finished:
                total.update(track.usage)
        return {key: amount for key, amount in total.items() if amount}

    def admissions(self) -> int:
        """Admissions seen, re-admissions after an eviction included."""
        return sum(track.admissions for track in self.workloads.values())

    def admitted_count(self) -> int:
        """Workloads admitted at least once."""
        return sum(1 for track in self.workloads.values() if track.admissions)

    def jobs_complete(self) -> tuple[int, int]:
        return sum(1 for job in self.jobs.values() if job.complete), len(self.jobs)

    def end_violations(self, expected_jobs: int) -> list[str]:
        """The end state: every Job complete, no quota held, none reported held."""
        problems = []
        complete, seen = self.jobs_complete()
        if complete != expected_jobs or seen != expected_jobs:
            pending = sorted(
                (job for job in self.jobs.values() if not job.complete), key=lambda j: j.key
            )
            names = [job.key for job in pending]
            problems.append(
                f"{complete} of {expected_jobs} Jobs complete ({seen} seen); "
                f"not complete: {names[:10]}{' ...' if len(names) > 10 else ''}"
            )
            for job in pending[:3]:  # where they stand, as last seen
                workloads = [t.last for t in self.workloads.values() if t.job == job.uid]
                problems.append("  last seen: " + "\n             ".join([job.last, *workloads]))
        return problems + self.quota_held()

    def quota_held(self) -> list[str]:
        """Quota still held, by the Workloads' records or by the queues' reports."""
        problems = []
        for name in sorted(self.cluster_queue_names):
            held = self.usage(name)
            if held:
                holders = sorted(
                    t.key
                    for t in self.workloads.values()
                    if t.cluster_queue == name and t.reserved and not t.finished
                )
                problems.append(f"ClusterQueue {name} still holds {_usage_text(held)}: {holders}")
            status = (self.reported.get(name) or {}).get("status") or {}
            reported = _reported_usage(status)
            if any(reported.values()) or status.get("reservingWorkloads"):
                problems.append(
                    f"ClusterQueue {name} reports {_usage_text(reported)} reserved, "
                    f"reservingWorkloads={status.get('reservingWorkloads')}"
                )
        return problems

    # -- workloads ----------------------------------------------------------------------
    def _workload(self, event_type: str, obj: Mapping[str, Any], event: str) -> None:
        metadata = obj.get("metadata") or {}
        uid = str(metadata.get("uid"))
        rv = int(metadata.get("resourceVersion") or 0)
        track = self.workloads.setdefault(uid, _WorkloadTrack(key=_key(obj)))
        track.job = owner_uid(obj) or track.job
        track.last = event
        if track.job is not None:
            self._workloads_of.setdefault(track.job, set()).add(uid)
        deleted = event_type == "DELETED"
        reserved = reserves(obj) and not deleted
        finished = condition_true(obj, "Finished")
        if condition_true(obj, "Evicted"):
            if not track.evicted_since_admission and track.reserved:
                self.evictions += 1
                track.evicted_at = self._at
            track.evicted_since_admission = True
        if reserved and not track.reserved:
            marks = _eviction_marks(obj)
            if (
                track.admissions
                and not track.evicted_since_admission
                and marks == track.eviction_marks
            ):
                self._violate(
                    "admitted-twice",
                    track.key,
                    f"admission #{track.admissions + 1} without an eviction since admission "
                    f"#{track.admissions} (shown by: {track.admitted_by})",
                    event,
                )
            track.admissions += 1
            track.evicted_since_admission = False
            track.eviction_marks = marks
            track.admitted_by = event
        elif track.reserved and not reserved and not deleted and not finished:
            if not track.evicted_since_admission and not condition_true(obj, "Evicted"):
                self._violate(
                    "admission-lost",
                    track.key,
                    "the admission was removed without an eviction (not finished)",
                    event,
                )
        if track.reserved and not reserved and track.evicted_at is not None:
            if self._at is not None and not self._relisting:
                self.release_waits.append(self._at - track.evicted_at)
            track.evicted_at = None
        track.reserved, track.finished = reserved, finished
        admission = (obj.get("status") or {}).get("admission") or {}
        track.cluster_queue = admission.get("clusterQueue") or track.cluster_queue
        track.usage = workload_usage(obj) if reserved else {}
        if track.job is not None:
            track.history.record(self._step_rv(WORKLOAD, rv, not reserved), reserved, event)
            holding = reserved and not finished
            track.holding.record(self._step_rv(WORKLOAD, rv, not holding), holding, event)
            self._dirty_jobs.add(track.job)
            self._dirty_pods.update(uid for uid, pod in self.pods.items() if pod.job == track.job)
        if deleted:
            track.reserved = False
        if track.cluster_queue in self.cluster_queue_names:
            if self._relisting:
                self._deferred_quota.add(track.cluster_queue)
            else:
                self._check_quota(track.cluster_queue, event)

    def _check_quota(self, cluster_queue: str, event: str) -> None:
        self.checks += 1
        used = self.usage(cluster_queue)
        peak = self.peak.setdefault(cluster_queue, {})
        for key, amount in used.items():
            peak[key] = max(peak.get(key, 0), amount)
        spec = self.queues.get(cluster_queue)
        if spec is None:
            return
        for (flavor, resource), amount in used.items():
            limit = spec.limits.get((flavor, resource))
            if limit is None:
                self._violate(
                    "cq-over-quota",
                    cluster_queue,
                    f"{_fmt(amount)} of {flavor}/{resource}, which it has no quota for",
                    event,
                )
                continue
            ceiling = spec.ceiling(limit)
            if ceiling is not None and amount > ceiling:
                self._violate(
                    "cq-over-quota",
                    cluster_queue,
                    f"{flavor}/{resource} uses {_fmt(amount)} > {_fmt(ceiling)} "
                    f"(nominal {_fmt(limit.nominal)} + borrowing limit "
                    f"{_fmt(limit.borrowing or 0)})",
                    event,
                )
        if spec.cohort is not None:
            self._check_cohort(spec.cohort, event)

    def _check_cohort(self, cohort: str, event: str) -> None:
        members = [spec for spec in self.queues.values() if spec.cohort == cohort]
        keys = {key for spec in members for key in spec.limits}
        for key in sorted(keys):
            lendable = sum(spec.limits[key].lendable for spec in members if key in spec.limits)
            borrowed = 0
            total = 0
            for spec in members:
                amount = self.usage(spec.name).get(key, 0)
                total += amount
                guaranteed = spec.limits[key].guaranteed if key in spec.limits else 0
                borrowed += max(0, amount - guaranteed)
            if borrowed > lendable:
                self._violate(
                    "cohort-over-quota",
                    cohort,
                    f"{key[0]}/{key[1]}: members use {_fmt(total)} "
                    f"({_fmt(borrowed)} beyond what they keep) > {_fmt(lendable)} lent",
                    event,
                )

    # -- cluster queues ------------------------------------------------------------------
    def _cluster_queue(self, event_type: str, obj: Mapping[str, Any], event: str) -> None:
        name = str(obj["metadata"]["name"])
        if event_type == "DELETED":
            self.queues.pop(name, None)
            self.reported.pop(name, None)
            return
        spec = QueueSpec.read(obj)
        self.queues[name] = spec
        self.reported[name] = obj
        self.checks += 1
        for (flavor, resource), amount in _reported_usage(obj.get("status") or {}).items():
            limit = spec.limits.get((flavor, resource))
            if limit is None:
                continue
            ceiling = spec.ceiling(limit)
            if ceiling is None:
                continue
            if amount > ceiling:
                self._violate(
                    "reported-over-quota",
                    name,
                    f"status.flavorsReservation says {flavor}/{resource} {_fmt(amount)} "
                    f"> {_fmt(ceiling)}",
                    event,
                )

    # -- jobs -------------------------------------------------------------------------------
    def _job(self, event_type: str, obj: Mapping[str, Any], event: str) -> None:
        metadata = obj.get("metadata") or {}
        uid = str(metadata.get("uid"))
        rv = int(metadata.get("resourceVersion") or 0)
        track = self.jobs.setdefault(uid, _JobTrack(key=_key(obj), uid=uid))
        track.last = event
        track.complete = condition_true(obj, "Complete")
        track.runs = job_runs(obj) and event_type != "DELETED"
        track.history.record(self._step_rv(JOB, rv, track.runs), track.runs, event)
        self._dirty_jobs.add(uid)

    def _check_jobs(self) -> None:
        """Every Job with news, over the revisions both watches have delivered."""
        safe = min(self.watermarks[JOB], self.watermarks[WORKLOAD])
        for uid in sorted(self._dirty_jobs):
            job = self.jobs.get(uid)
            if job is None:
                continue  # a Workload of a Job not seen yet
            self.checks += 1
            histories = [self.workloads[w].history for w in self._workloads_of.get(uid, ())]
            later = [
                step
                for history in (job.history, *histories)
                for step in history.steps
                if job.checked_upto < step.rv <= safe
            ]
            for step in sorted(later, key=lambda s: s.rv):
                uncovered = job.history.at(step.rv) and not any(h.at(step.rv) for h in histories)
                if uncovered and job.unadmitted_since is None:
                    job.unadmitted_since = step.rv
                    running = [s for s in job.history.steps if s.rv <= step.rv][-1]
                    self._violate(
                        "job-runs-unadmitted",
                        job.key,
                        "runs (suspend=false, not finished) while none of its Workloads "
                        f"holds an admission; running since: {running.event}",
                        step.event,
                    )
                elif not uncovered:
                    job.unadmitted_since = None
            job.checked_upto = max(job.checked_upto, safe)
            pending = any(
                step.rv > safe for history in (job.history, *histories) for step in history.steps
            )
            if not pending:
                self._dirty_jobs.discard(uid)

    # -- pods -------------------------------------------------------------------------------
    def _pod(self, event_type: str, obj: Mapping[str, Any], event: str) -> None:
        metadata = obj.get("metadata") or {}
        uid = str(metadata.get("uid"))
        rv = int(metadata.get("resourceVersion") or 0)
        job = owner_uid(obj)
        if job is None:
            return  # not a Job's pod
        track = self.pods.setdefault(uid, _PodTrack(key=_key(obj), job=job))
        live = pod_live(obj) and event_type != "DELETED"
        track.history.record(self._step_rv(POD, rv, live), live, event)
        self._dirty_pods.add(uid)

    def _check_pods(self) -> None:
        """Every pod with news, over the revisions the Pod and Workload watches delivered."""
        safe = min(self.watermarks[POD], self.watermarks[WORKLOAD])
        for uid in sorted(self._dirty_pods):
            pod = self.pods.get(uid)
            if pod is None or pod.job is None:
                continue
            self.checks += 1
            holding = [self.workloads[w].holding for w in self._workloads_of.get(pod.job, ())]
            later = [
                step
                for history in (pod.history, *holding)
                for step in history.steps
                if pod.checked_upto < step.rv <= safe
            ]
            for step in sorted(later, key=lambda s: s.rv):
                uncovered = pod.history.at(step.rv) and not any(h.at(step.rv) for h in holding)
                if uncovered and pod.uncovered_since is None:
                    pod.uncovered_since = step.rv
                    live = [s for s in pod.history.steps if s.rv <= step.rv][-1]
                    self._violate(
                        "pod-live-without-quota",
                        pod.key,
                        "is live (running or terminating) while none of its Job's Workloads "
                        f"holds quota; live since: {live.event}",
                        step.event,
                    )
                elif not uncovered:
                    pod.uncovered_since = None
            pod.checked_upto = max(pod.checked_upto, safe)
            pending = any(
                step.rv > safe for history in (pod.history, *holding) for step in history.steps
            )
            if not pending:
                self._dirty_pods.discard(uid)

    def _violate(self, kind: str, subject: str, detail: str, event: str) -> None:
        key = (kind, subject, event)
        if key not in self._seen:
            self._seen.add(key)
            self.violations.append(Violation(kind, subject, detail, event))


def _key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return "/".join(filter(None, [metadata.get("namespace"), metadata.get("name")]))


def _reported_usage(status: Mapping[str, Any]) -> dict[FlavorResource, int]:
    usage = {}
    for flavor in status.get("flavorsReservation") or []:
        for resource in flavor.get("resources") or []:
            usage[(str(flavor.get("name")), str(resource.get("name")))] = nanos(
                resource.get("total", 0)
            )
    return usage


def _usage_text(usage: Mapping[FlavorResource, int]) -> str:
    return ", ".join(f"{f}/{r}={_fmt(n)}" for (f, r), n in sorted(usage.items())) or "nothing"


def summarize(violations: list[Violation], limit: int = 5) -> str:
    """Counts by kind, then the first ``limit`` of each kind with their events."""
    if not violations:
        return "no invariant violated"
    counts = Counter(v.kind for v in violations)
    lines = [", ".join(f"{kind}: {count}" for kind, count in sorted(counts.items()))]
    for kind in sorted(counts):
        shown = [v for v in violations if v.kind == kind][:limit]
        lines += [str(v) for v in shown]
        if counts[kind] > limit:
            lines.append(f"  ... and {counts[kind] - limit} more {kind}")
    return "\n".join(lines)
