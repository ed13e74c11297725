"""Every write the scheduler makes, in one place, one writer per object.

Writes to the same object are serialised by a per-object lock, so two
patches to one Job never race.  Every patch is *guarded*: a JSON patch whose
first operation tests the ``resourceVersion`` the change was computed from.
If the object moved in between, the API server refuses the whole patch and
the REST layer raises :class:`~scheduler.kube.rest.Conflict`; the caller
recomputes from a fresh object instead of overwriting someone else's change.
Each write is counted and timed by verb and resource
(``kuota_api_write_duration_seconds``), which is how "API writes per admitted
Job" is measured.

Events explain, they decide nothing: :mod:`scheduler.kube.events` sends them
in the background, aggregates repeats and never delays a decision.

This is also the one place a later change adds fencing (no write unless the
Lease is held at that instant, see :mod:`scheduler.kube.leader`): every write
goes through :meth:`Writer._timed`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import jsonpatch

from scheduler.api import objects
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP
from scheduler.kube.events import EventRecorder
from scheduler.kube.metrics import WRITE_SECONDS
from scheduler.kube.rest import Conflict, NotFound, Resource, RestClient, RestError

__all__ = ["Conflict", "NotFound", "RestError", "Writer"]

T = TypeVar("T")
JOBS = Resource("batch", "v1", "jobs")


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


class Writer:
    """The scheduler's writes over a :class:`~scheduler.kube.rest.RestClient`."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest
        self._locks: dict[str, asyncio.Lock] = {}
        self.counts: Counter[str] = Counter()
        """Writes attempted, by ``"<verb> <resource>"``."""
        self.events = EventRecorder(rest, timed=self._timed)

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def _timed(self, verb: str, resource: str, call: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await call
        finally:
            self.counts[f"{verb} {resource}"] += 1
            WRITE_SECONDS.labels(verb, resource).observe(time.perf_counter() - started)

    # -- Workloads and queues ----------------------------------------------------------

    async def create_workload(self, workload: Mapping[str, Any]) -> bool:
        """Create; False when it already exists (a retry after a crash)."""
        namespace = objects.namespace(workload) or ""
        path = kueue_resource("workloads").collection_path(namespace)
        async with self._lock(f"workloads/{objects.key(workload)}"):
            try:
                await self._timed("create", "workloads", self.rest.create(path, workload))
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
            return await self._timed("update", "workloads", self.rest.replace(path, body))

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
                "delete", "workloads", self.rest.delete(path, preconditions=preconditions)
            )

    async def write_workload_status(
        self, workload: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Turn the Workload as read into one with ``status``: a guarded JSON patch on /status."""
        return await self.write_status("workloads", workload, status)

    async def write_status(
        self, plural: str, obj: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Guarded JSON patch on the status of a kueue.x-k8s.io object; the object as stored."""
        # Diff from the object exactly as stored: an object without any status
        # needs "add /status", not "add /status/conditions".
        current: dict[str, Any] = {"status": obj["status"]} if "status" in obj else {}
        operations = guarded_patch(current, {"status": dict(status)}, read=obj)
        path = kueue_resource(plural).object_path(
            objects.name(obj), namespace=objects.namespace(obj), subresource="status"
        )
        async with self._lock(f"{plural}/{objects.key(obj)}"):
            return await self._timed(
                "patch", f"{plural}/status", self.rest.json_patch(path, operations)
            )

    # -- Jobs ----------------------------------------------------------------------------

    async def patch_job(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
        """One guarded JSON patch from ``old`` to ``new``; the Job as stored (no write if equal)."""
        operations = guarded_patch(old, new)
        if len(operations) == 1:
            return dict(old)
        path = JOBS.object_path(objects.name(old), namespace=objects.namespace(old))
        async with self._lock(f"jobs/{objects.key(old)}"):
            return await self._timed("patch", "jobs", self.rest.json_patch(path, operations))

    async def clear_job_start_time(self, job: Mapping[str, Any]) -> dict[str, Any]:
        """Remove ``status.startTime`` (so the pod template of a suspended Job may change)."""
        operations = [version_test(job), {"op": "remove", "path": "/status/startTime"}]
        path = JOBS.object_path(
            objects.name(job), namespace=objects.namespace(job), subresource="status"
        )
        async with self._lock(f"jobs/{objects.key(job)}"):
            return await self._timed("patch", "jobs/status", self.rest.json_patch(path, operations))

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
