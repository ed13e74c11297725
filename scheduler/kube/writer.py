"""Every write the scheduler makes, in one place, one writer per object.

Writes to the same object are serialised by a per-object lock so two patches
to one Job never race.  Status writes carry the ``resourceVersion`` they were
computed from: a 409 means the object moved, and the caller recomputes from a
fresh read instead of overwriting someone else's change.  Each write is
counted and timed by verb and resource, which is how "API writes per admitted
Job" is measured.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import jsonpatch
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import Histogram

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
WRITE_SECONDS = Histogram(
    "kuota_api_write_duration_seconds",
    "Latency of the scheduler's API writes.",
    ["verb", "resource"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


class Conflict(Exception):
    """The object changed since it was read (HTTP 409); recompute from a fresh read."""


class Gone(Exception):
    """The object no longer exists (HTTP 404)."""


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class Writer:
    def __init__(self, api: client.ApiClient) -> None:
        self.custom = client.CustomObjectsApi(api)
        self.batch = client.BatchV1Api(api)
        self.core = client.CoreV1Api(api)
        self._locks: dict[str, asyncio.Lock] = {}
        self.counts: Counter[str] = Counter()
        self._events_in_flight: set[asyncio.Task[None]] = set()
        self._event_slots = asyncio.Semaphore(8)

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def _timed(self, verb: str, resource: str, call: Any) -> Any:
        started = time.perf_counter()
        try:
            return await call
        except ApiException as failure:
            if failure.status == 409:
                raise Conflict(str(failure.reason)) from failure
            if failure.status == 404:
                raise Gone(str(failure.reason)) from failure
            raise
        finally:
            self.counts[f"{verb} {resource}"] += 1
            WRITE_SECONDS.labels(verb, resource).observe(time.perf_counter() - started)

    async def create_workload(self, workload: Mapping[str, Any]) -> bool:
        """Create; False when it already exists (a retry after a crash)."""
        meta = _metadata(workload)
        async with self._lock(f"workload/{meta.get('namespace')}/{meta.get('name')}"):
            try:
                await self._timed(
                    "create",
                    "workloads",
                    self.custom.create_namespaced_custom_object(
                        GROUP, VERSION, str(meta.get("namespace")), "workloads", dict(workload)
                    ),
                )
                return True
            except Conflict:
                return False

    async def write_workload_status(
        self, workload: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Turn the Workload as read into one with ``status``: a guarded JSON patch on /status."""
        return await self.write_status("workloads", workload, status)

    async def write_status(
        self, plural: str, obj: Mapping[str, Any], status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Guarded JSON patch on the status of a kueue.x-k8s.io object (namespaced or cluster-scoped)."""
        meta = _metadata(obj)
        namespace, name = meta.get("namespace"), str(meta.get("name"))
        # Diff from the object exactly as stored: an object without any status
        # needs "add /status", not "add /status/conditions".
        current = {"status": obj["status"]} if "status" in obj else {}
        operations = self._guarded(current, {"status": dict(status)}, meta)
        async with self._lock(f"{plural}/{namespace}/{name}"):
            if namespace:
                call = self.custom.patch_namespaced_custom_object_status(
                    GROUP, VERSION, str(namespace), plural, name, operations
                )
            else:
                call = self.custom.patch_cluster_custom_object_status(
                    GROUP, VERSION, plural, name, operations
                )
            result = await self._patch("patch", f"{plural}/status", call)
        return dict(result)

    async def patch_job(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
        """One JSON patch from ``old`` to ``new``, guarded by a test of the resourceVersion; the Job as stored."""
        meta = _metadata(old)
        operations = self._guarded(old, new, meta)
        if len(operations) == 1:
            return dict(old)
        async with self._lock(f"job/{meta.get('namespace')}/{meta.get('name')}"):
            result = await self._patch(
                "patch",
                "jobs",
                self.batch.patch_namespaced_job(
                    str(meta.get("name")), str(meta.get("namespace")), operations
                ),
            )
        stored: dict[str, Any] = self.batch.api_client.sanitize_for_serialization(result)
        stored.setdefault("apiVersion", "batch/v1")
        stored.setdefault("kind", "Job")
        return stored

    async def clear_job_start_time(self, job: Mapping[str, Any]) -> dict[str, Any]:
        """Remove ``status.startTime`` (so the pod template of a suspended Job may change)."""
        meta = _metadata(job)
        operations = [
            {
                "op": "test",
                "path": "/metadata/resourceVersion",
                "value": meta.get("resourceVersion"),
            },
            {"op": "remove", "path": "/status/startTime"},
        ]
        async with self._lock(f"job/{meta.get('namespace')}/{meta.get('name')}"):
            result = await self._patch(
                "patch",
                "jobs/status",
                self.batch.patch_namespaced_job_status(
                    str(meta.get("name")), str(meta.get("namespace")), operations
                ),
            )
        return self.batch.api_client.sanitize_for_serialization(result)

    @staticmethod
    def _guarded(
        old: Mapping[str, Any], new: Mapping[str, Any], meta: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """RFC 6902 operations from ``old`` to ``new``, first testing the version they were computed from."""
        guard = {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": meta.get("resourceVersion"),
        }
        return [guard, *jsonpatch.make_patch(dict(old), dict(new)).patch]

    async def _patch(self, verb: str, resource: str, call: Any) -> Any:
        try:
            return await self._timed(verb, resource, call)
        except ApiException as failure:
            if failure.status == 422 and "test" in str(failure.body or "").lower():
                raise Conflict("the object changed since it was read") from failure
            raise

    async def event(
        self,
        involved: Mapping[str, Any],
        *,
        kind: str,
        reason: str,
        message: str,
        event_type: str = "Normal",
    ) -> None:
        """Emit a core/v1 Event on ``involved`` in the background.

        Events explain, they decide nothing: they never delay an admission, and
        a failed one is not retried.  At most 8 are in flight.
        """
        meta = _metadata(involved)
        namespace = str(meta.get("namespace") or "default")
        body = {
            "metadata": {"generateName": f"{meta.get('name')}.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": involved.get("apiVersion"),
                "kind": kind,
                "name": meta.get("name"),
                "namespace": namespace,
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": reason,
            "message": message[:1024],
            "type": event_type,
            "source": {"component": "kuota-scheduler"},
            "reportingComponent": "kuota-scheduler",
        }

        async def send() -> None:
            async with self._event_slots:
                try:
                    await self._timed(
                        "create", "events", self.core.create_namespaced_event(namespace, body)
                    )
                except (TimeoutError, ApiException, Conflict, Gone, OSError):
                    pass

        task = asyncio.create_task(send())
        self._events_in_flight.add(task)
        task.add_done_callback(self._events_in_flight.discard)
