"""Every write the scheduler makes, in one place, one writer per object.

Writes to the same object are serialised by a per-object lock, so two
patches to one Job never race.  Every write is *guarded* by the
``resourceVersion`` the change was computed from.  If the object moved in
between, the API server refuses it and the REST layer raises
:class:`~scheduler.kube.rest.Conflict`; the caller recomputes from a fresh
object instead of overwriting someone else's change.

- Jobs and the status of queues: a JSON patch whose first operation tests the
  resourceVersion.
- A Workload's status, as Kueue writes it: server-side apply on ``/status``
  as the field manager ``kueue-admission``, forcing ownership, with the
  resourceVersion in the applied object (a precondition: 409 when it moved).
  The applied configuration holds only what the scheduler manages
  (``status.admission`` and the conditions of
  :data:`~scheduler.api.refs.SCHEDULER_WORKLOAD_CONDITIONS`), so fields other
  writers own are left to them, and another tool applying as
  ``kueue-admission`` (Kueue's own tooling does) can clear the admission.
  ``status.reclaimablePods`` is applied the same way by its own field manager,
  ``kueue-reclaimable-pods``, as Kueue's Job controller writes it.
Each write is counted and timed by verb and resource
(``kuota_api_write_duration_seconds``), which is how "API writes per admitted
Job" is measured.

Events explain, they decide nothing: :mod:`scheduler.kube.events` sends them
in the background, aggregates repeats and never delays a decision.

**Fencing.**  Every write, the Events' and the finalizers' included, goes
through :meth:`Writer._timed`, which first asks the :class:`~scheduler.kube.fence.Fence`
(:mod:`scheduler.kube.fence`): when this replica may no longer hold the Lease
the write is not sent and :class:`~scheduler.kube.fence.Fenced` is raised
(counted in ``kuota_api_writes_fenced_total``); otherwise the write is sent
with the fence's timeout, so it cannot be waited for after the Lease may
have passed to another replica.  The instant of the last write sent is
``kuota_api_last_write_sent_timestamp_seconds``.

**Connection errors.**  A write that got no answer
(:class:`~scheduler.kube.rest.Unreachable`) is counted in ``unreachable``;
the scheduling loop reads and resets it after each turn
(:meth:`Writer.take_unreachable`) and backs off instead of trying again at
once.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import jsonpatch

from scheduler.api import objects
from scheduler.api.refs import (
    ADMISSION_FIELD_MANAGER,
    HUB_VERSION,
    KUEUE_GROUP,
    RECLAIMABLE_PODS_FIELD_MANAGER,
    SCHEDULER_WORKLOAD_CONDITIONS,
    V1BETA2,
)
from scheduler.jobs import BATCH_JOB, for_object
from scheduler.kube import watches
from scheduler.kube.events import EventRecorder, Send
from scheduler.kube.fence import Fence, Fenced, Unfenced
from scheduler.kube.metrics import LAST_WRITE_SENT, WRITE_SECONDS, WRITES_FENCED
from scheduler.kube.rest import Conflict, NotFound, Resource, RestClient, RestError, Unreachable

__all__ = ["Conflict", "Fenced", "NotFound", "RestError", "Writer", "workload_status_apply"]

T = TypeVar("T")
POD_STATUS_FIELD_MANAGER = "kuota-scheduler"
TERMINATION_TARGET = "TerminationTarget"
"""The Pod condition Kueue sets on a Pod it stops before deleting it."""


def job_resource(job: Mapping[str, Any]) -> Resource:
    """The resource of a managed job by its integration; an unknown kind is taken for a Job."""
    return watches.kind_resource(for_object(job) or BATCH_JOB)


def job_kind(job: Mapping[str, Any]) -> str:
    """The kind of a managed job for its Events (``Job`` when the object names none): pure."""
    kind = job.get("kind")
    return kind if isinstance(kind, str) and kind else "Job"


def kueue_resource(plural: str) -> Resource:
    """A ``kueue.x-k8s.io`` resource in the version kuota stores: pure."""
    return Resource(KUEUE_GROUP, HUB_VERSION, plural)


def version_test(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-patch operation that fails unless ``obj`` is unchanged on the server: pure."""
    return {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": objects.metadata(obj).get("resourceVersion"),
    }


def guarded_patch(
    old: Mapping[str, Any], new: Mapping[str, Any], *, read: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """RFC 6902 operations from ``old`` to ``new``, first testing the version of ``read``: pure.

    ``read`` is the object as it was read (default ``old``); its
    resourceVersion is the one the change was computed from.
    """
    guard = version_test(old if read is None else read)
    return [guard, *jsonpatch.make_patch(dict(old), dict(new)).patch]


def workload_status_apply(workload: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """The applied configuration that gives ``workload`` the scheduler's part of ``status``: pure.

    ``status`` is the whole new status (:mod:`scheduler.status.workload_status`);
    only ``admission`` and the scheduler's conditions are applied.  Leaving
    ``admission`` out removes it (the field manager owned it).  The
    resourceVersion of the object as read makes the apply conditional.
    """
    meta = objects.metadata(workload)
    metadata: dict[str, Any] = {"name": objects.name(workload)}
    if meta.get("namespace"):
        metadata["namespace"] = meta["namespace"]
    if meta.get("resourceVersion"):
        metadata["resourceVersion"] = meta["resourceVersion"]
    applied: dict[str, Any] = {
        "conditions": [
            dict(condition)
            for condition in status.get("conditions") or []
            if condition.get("type") in SCHEDULER_WORKLOAD_CONDITIONS
        ]
    }
    if status.get("admission") is not None:
        applied["admission"] = status["admission"]
    # The admission checks kuota lists, with their states as read (the apply is
    # conditional on that version): kuota is their workload controller.
    if status.get("admissionChecks") is not None:
        applied["admissionChecks"] = status["admissionChecks"]
    # Kept by kuota as Kueue's workload controller keeps them (docs/concepts.md#workload-
    # conditions): leaving one out removes it (the maximum execution time clears the
    # accumulated time).
    for kept in ("accumulatedPastExecutionTimeSeconds", "schedulingStats"):
        if status.get(kept) is not None:
            applied[kept] = status[kept]
    return {"apiVersion": V1BETA2, "kind": "Workload", "metadata": metadata, "status": applied}


def _status_apply(workload: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """An applied configuration of ``status`` alone, conditional on the version read: pure."""
    meta = objects.metadata(workload)
    metadata: dict[str, Any] = {"name": objects.name(workload)}
    for key in ("namespace", "resourceVersion"):
        if meta.get(key):
            metadata[key] = meta[key]
    return {"apiVersion": V1BETA2, "kind": "Workload", "metadata": metadata, "status": status}


def reclaimable_pods_apply(
    workload: Mapping[str, Any], pods: Sequence[tuple[str, int]]
) -> dict[str, Any]:
    """The applied configuration of ``status.reclaimablePods``: pure.

    None reclaimable leaves the field out, so the field manager owns none of
    it and the list goes (Kueue applies an empty list the same way).
    """
    status: dict[str, Any] = {}
    if pods:
        status["reclaimablePods"] = [{"name": name, "count": count} for name, count in pods]
    return _status_apply(workload, status)


class Writer:
    """The scheduler's writes over a :class:`~scheduler.kube.rest.RestClient`."""

    def __init__(self, rest: RestClient, *, fence: Fence | None = None) -> None:
        self.rest = rest
        self.fence: Fence = fence or Unfenced()
        self._locks: dict[str, asyncio.Lock] = {}
        self.counts: Counter[str] = Counter()
        """Writes sent, by ``"<verb> <resource>"``."""
        self.fenced: Counter[str] = Counter()
        """Writes the fence refused, by ``"<verb> <resource>"``."""
        self.unreachable = 0
        """Writes that got no answer since :meth:`take_unreachable` last ran."""
        self.events = EventRecorder(rest, timed=self._timed)

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def _timed(self, verb: str, resource: str, send: Send[T]) -> T:
        """Send one write if the fence allows it (else :class:`Fenced`), counted and timed."""
        try:
            timeout = self.fence.write_timeout()
        except Fenced:
            self.fenced[f"{verb} {resource}"] += 1
            WRITES_FENCED.labels(verb, resource).inc()
            raise
        LAST_WRITE_SENT.set_to_current_time()
        self.counts[f"{verb} {resource}"] += 1
        started = time.perf_counter()
        try:
            return await send(timeout)
        except Unreachable:
            self.unreachable += 1
            raise
        finally:
            WRITE_SECONDS.labels(verb, resource).observe(time.perf_counter() - started)

    def take_unreachable(self) -> int:
        """Writes without an answer since the last call (and start counting again)."""
        count, self.unreachable = self.unreachable, 0
        return count

    # -- Workloads and queues ----------------------------------------------------------

    async def create_workload(self, workload: Mapping[str, Any]) -> bool:
        """Create; False when it already exists (a retry after a crash)."""
        namespace = objects.namespace(workload) or ""
        path = kueue_resource("workloads").collection_path(namespace)
        async with self._lock(f"workloads/{objects.key(workload)}"):
            try:
                await self._timed(
                    "create",
                    "workloads",
                    lambda timeout: self.rest.create(path, workload, timeout=timeout),
                )
            except Conflict:
                return False
        return True

    async def update_workload(
        self, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Replace the Workload's spec: a PUT carrying the resourceVersion ``old`` was read at.

        The API server refuses it (409, :class:`Conflict`) if the Workload moved
        since, e.g. when an admission was written in between.
        """
        body = {
            **dict(new),
            "metadata": {
                **objects.metadata(new),
                "resourceVersion": objects.metadata(old).get("resourceVersion"),
            },
        }
        path = kueue_resource("workloads").object_path(
            objects.name(old), namespace=objects.namespace(old)
        )
        async with self._lock(f"workloads/{objects.key(old)}"):
            return await self._timed(
                "update",
                "workloads",
                lambda timeout: self.rest.replace(path, body, timeout=timeout),
            )

    async def delete_workload(self, workload: Mapping[str, Any]) -> None:
        """Delete the Workload as read: preconditions on its UID and resourceVersion."""
        metadata = objects.metadata(workload)
        preconditions = {
            key: str(metadata[key]) for key in ("uid", "resourceVersion") if metadata.get(key)
        }
        path = kueue_resource("workloads").object_path(
            objects.name(workload), namespace=objects.namespace(workload)
        )
        async with self._lock(f"workloads/{objects.key(workload)}"):
            await self._timed(
                "delete",
                "workloads",
                lambda timeout: self.rest.delete(
                    path, preconditions=preconditions, timeout=timeout
                ),
            )

    async def write_workload_status(
        self, workload: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Give the Workload as read the scheduler's part of ``status``; the object as stored.

        Server-side apply on ``/status`` as ``kueue-admission`` with ``force``,
        conditional on the resourceVersion read (:func:`workload_status_apply`).
        """
        path = kueue_resource("workloads").object_path(
            objects.name(workload), namespace=objects.namespace(workload), subresource="status"
        )
        body = workload_status_apply(workload, status)
        async with self._lock(f"workloads/{objects.key(workload)}"):
            stored = await self._timed(
                "patch",
                "workloads/status",
                lambda timeout: self.rest.apply(
                    path, body, field_manager=ADMISSION_FIELD_MANAGER, force=True, timeout=timeout
                ),
            )
            requeue = status.get("requeueState")
            if requeue is None and objects.status(stored).get("requeueState") is not None:
                # Cleared on deactivation (docs/scheduling.md#eviction-and-requeue): removed
                # by JSON patch, guarded.
                stored = await self._timed(
                    "patch",
                    "workloads/status",
                    lambda timeout: self.rest.json_patch(
                        path,
                        [version_test(stored), {"op": "remove", "path": "/status/requeueState"}],
                        timeout=timeout,
                    ),
                )
            elif requeue is not None and requeue != objects.status(workload).get("requeueState"):
                # The backoff of a Retry or a PodsReady timeout, by JSON patch as Kueue does: other
                # writers (PodsReady) own it too, and an apply would own it for good.
                stored = await self._timed(
                    "patch",
                    "workloads/status",
                    lambda timeout: self.rest.json_patch(
                        path,
                        [
                            version_test(stored),
                            {"op": "add", "path": "/status/requeueState", "value": requeue},
                        ],
                        timeout=timeout,
                    ),
                )
            if "admission" in body["status"] or objects.admission(stored) is None:
                return stored
            # Another manager co-owns the admission (written before kuota applied
            # as kueue-admission, by JSON patch): leaving it out of an apply does not
            # remove it, and neither does null.  Remove it explicitly, guarded.
            removal = [version_test(stored), {"op": "remove", "path": "/status/admission"}]
            return await self._timed(
                "patch",
                "workloads/status",
                lambda timeout: self.rest.json_patch(path, removal, timeout=timeout),
            )

    async def write_reclaimable_pods(
        self, workload: Mapping[str, Any], pods: Sequence[tuple[str, int]]
    ) -> dict[str, Any]:
        """``status.reclaimablePods`` of the Workload as read; the object as stored.

        Server-side apply on ``/status`` as ``kueue-reclaimable-pods`` with
        ``force``, conditional on the resourceVersion read.
        """
        path = kueue_resource("workloads").object_path(
            objects.name(workload), namespace=objects.namespace(workload), subresource="status"
        )
        body = reclaimable_pods_apply(workload, pods)
        async with self._lock(f"workloads/{objects.key(workload)}"):
            return await self._timed(
                "patch",
                "workloads/status",
                lambda timeout: self.rest.apply(
                    path,
                    body,
                    field_manager=RECLAIMABLE_PODS_FIELD_MANAGER,
                    force=True,
                    timeout=timeout,
                ),
            )

    async def write_status(
        self, plural: str, obj: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Guarded JSON patch on the status of a queue (any kueue.x-k8s.io object); as stored."""
        # Diff from the object exactly as stored: an object without any status
        # needs "add /status", not "add /status/conditions".
        current: dict[str, Any] = {"status": obj["status"]} if "status" in obj else {}
        operations = guarded_patch(current, {"status": dict(status)}, read=obj)
        path = kueue_resource(plural).object_path(
            objects.name(obj), namespace=objects.namespace(obj), subresource="status"
        )
        async with self._lock(f"{plural}/{objects.key(obj)}"):
            return await self._timed(
                "patch",
                f"{plural}/status",
                lambda timeout: self.rest.json_patch(path, operations, timeout=timeout),
            )

    # -- Jobs ----------------------------------------------------------------------------

    async def patch_job(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
        """One guarded JSON patch from ``old`` to ``new``; the Job as stored (no write if equal)."""
        operations = guarded_patch(old, new)
        if len(operations) == 1:
            return dict(old)
        resource = job_resource(old)
        path = resource.object_path(objects.name(old), namespace=objects.namespace(old))
        async with self._lock(f"{resource.plural}/{objects.key(old)}"):
            return await self._timed(
                "patch",
                resource.plural,
                lambda timeout: self.rest.json_patch(path, operations, timeout=timeout),
            )

    async def delete_job(self, job: Mapping[str, Any]) -> None:
        """Delete the job as read (its UID a precondition), its dependents in the background:
        its pods, and its Workload (owned by it), go with it."""
        resource = job_resource(job)
        path = resource.object_path(objects.name(job), namespace=objects.namespace(job))
        preconditions = {"uid": objects.uid(job) or ""}
        async with self._lock(f"{resource.plural}/{objects.key(job)}"):
            await self._timed(
                "delete",
                resource.plural,
                lambda timeout: self.rest.delete(
                    path, preconditions=preconditions, timeout=timeout, propagation="Background"
                ),
            )

    async def clear_job_start_time(self, job: Mapping[str, Any]) -> dict[str, Any]:
        """Remove ``status.startTime`` (so the pod template of a suspended Job may change)."""
        operations = [version_test(job), {"op": "remove", "path": "/status/startTime"}]
        resource = job_resource(job)
        path = resource.object_path(
            objects.name(job), namespace=objects.namespace(job), subresource="status"
        )
        async with self._lock(f"{resource.plural}/{objects.key(job)}"):
            return await self._timed(
                "patch",
                f"{resource.plural}/status",
                lambda timeout: self.rest.json_patch(path, operations, timeout=timeout),
            )

    async def stop_pod(
        self, pod: Mapping[str, Any], *, reason: str, message: str, now: str
    ) -> None:
        """Mark ``pod`` ``TerminationTarget`` (server-side apply of that condition), then delete it.

        The delete carries the Pod's UID as a precondition, so a new Pod of
        the same name is never hit; a Pod already gone is not an error.
        """
        name, namespace = objects.name(pod), objects.namespace(pod)
        uid = objects.uid(pod) or ""
        condition = {
            "type": TERMINATION_TARGET,
            "status": "True",
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "status": {"conditions": [condition]},
        }
        pods = job_resource(pod)
        status_path = pods.object_path(name, namespace=namespace, subresource="status")
        path = pods.object_path(name, namespace=namespace)
        async with self._lock(f"pods/{objects.key(pod)}"):
            try:
                await self._timed(
                    "apply",
                    "pods/status",
                    lambda timeout: self.rest.apply(
                        status_path,
                        body,
                        field_manager=POD_STATUS_FIELD_MANAGER,
                        force=True,
                        timeout=timeout,
                    ),
                )
                await self._timed(
                    "delete",
                    "pods",
                    lambda timeout: self.rest.delete(
                        path, preconditions={"uid": uid}, timeout=timeout
                    ),
                )
            except NotFound:
                return

    async def force_delete_pod(self, pod: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        """Write ``status`` on a pod stuck terminating, then delete it with no grace period.

        Both carry the Pod's UID (the status patch as a test, the delete as a
        precondition), so a new Pod of the same name is never hit.
        """
        name, namespace = objects.name(pod), objects.namespace(pod)
        uid = objects.uid(pod) or ""
        path = job_resource(pod).object_path(name, namespace=namespace)
        async with self._lock(f"pods/{objects.key(pod)}"):
            await self._write_pod_status(pod, status)
            await self._timed(
                "delete",
                "pods",
                lambda timeout: self.rest.delete(
                    path, preconditions={"uid": uid}, timeout=timeout, grace_period_seconds=0
                ),
            )

    async def fail_pod(self, pod: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        """Write ``status`` (a terminal one) on ``pod``, its UID tested so a new Pod of the same
        name is never hit."""
        async with self._lock(f"pods/{objects.key(pod)}"):
            await self._write_pod_status(pod, status)

    async def _write_pod_status(self, pod: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        name, namespace = objects.name(pod), objects.namespace(pod)
        path = job_resource(pod).object_path(name, namespace=namespace, subresource="status")
        operations: list[dict[str, Any]] = [
            {"op": "test", "path": "/metadata/uid", "value": objects.uid(pod) or ""},
            {"op": "replace", "path": "/status", "value": dict(status)},
        ]
        await self._timed(
            "patch",
            "pods/status",
            lambda timeout: self.rest.json_patch(path, operations, timeout=timeout),
        )

    async def delete_pod(self, pod: Mapping[str, Any]) -> None:
        """Delete ``pod`` as read (its UID a precondition); a Pod already gone is not an error."""
        resource = job_resource(pod)
        path = resource.object_path(objects.name(pod), namespace=objects.namespace(pod))
        uid = objects.uid(pod) or ""
        async with self._lock(f"pods/{objects.key(pod)}"):
            try:
                await self._timed(
                    "delete",
                    "pods",
                    lambda timeout: self.rest.delete(
                        path, preconditions={"uid": uid}, timeout=timeout
                    ),
                )
            except NotFound:
                return

    # -- Events --------------------------------------------------------------------------

    def event(
        self,
        involved: Mapping[str, Any],
        *,
        kind: str,
        reason: str,
        message: str,
        event_type: str = "Normal",
    ) -> None:
        """Record an Event on ``involved`` in the background (:mod:`scheduler.kube.events`)."""
        self.events.record(
            involved, kind=kind, reason=reason, message=message, event_type=event_type
        )

    async def events_sent(self) -> None:
        """Wait for the Events in flight (tests, and a graceful stop)."""
        await self.events.flush()
