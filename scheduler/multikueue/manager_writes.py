"""The MultiKueue controller's writes to the manager: conditions, check states, job status.

Writes to manager Workloads are JSON patches guarded by the resourceVersion
they were decided from: the scheduler owns the admission (server-side apply),
this controller only its check's entry, ``clusterName``,
``nominatedClusterNames`` and ``Finished`` of a Workload without a job.
Every write asks the fence first (:mod:`scheduler.kube.fence`) for its
timeout: a write refused raises :class:`~scheduler.kube.fence.Fenced`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import ACTIVE, FINISHED
from scheduler.kube.fence import Fence
from scheduler.kube.rest import Resource, RestClient, RestError
from scheduler.multikueue import decisions
from scheduler.multikueue.decisions import (
    ActiveCondition,
    ClearNomination,
    FinishLocal,
    Nominate,
    SetCheck,
    SyncJobStatus,
)
from scheduler.multikueue.workers import WORKLOADS
from scheduler.status.conditions import set_condition, timestamp

log = logging.getLogger("kuota.multikueue")
ManagerAction = SyncJobStatus | SetCheck | Nominate | ClearNomination | FinishLocal
"""The dispatch actions written to the manager (the rest are written to workers)."""


class ManagerWrites:
    """Writes to the manager cluster (see the module docstring)."""

    def __init__(
        self, rest: RestClient, *, clock: Callable[[], datetime], fence: Callable[[], Fence]
    ) -> None:
        self.rest = rest
        self.clock = clock
        self.fence = fence

    async def active_condition(
        self, resource: Resource, obj: Mapping[str, Any], condition: ActiveCondition
    ) -> dict[str, Any] | None:
        """Write ``Active`` on a cluster-scoped object's status when it changed."""
        current = objects.condition(obj, ACTIVE)
        generation = objects.generation(obj)
        if (
            current is not None
            and current.get("status") == ("True" if condition.status else "False")
            and current.get("reason") == condition.reason
            and current.get("message") == condition.message
            and current.get("observedGeneration") == generation
        ):
            return None
        conditions = set_condition(
            objects.conditions(obj),
            kind=ACTIVE,
            status=condition.status,
            reason=condition.reason,
            message=condition.message,
            now=self.clock(),
            generation=generation,
        )
        path = resource.object_path(objects.name(obj), subresource="status")
        try:
            stored = await self.rest.merge_patch(
                path, {"status": {"conditions": conditions}}, timeout=self.fence().write_timeout()
            )
        except RestError as failure:
            log.warning(
                "could not write the Active condition",
                extra={"object": objects.name(obj), "error": str(failure)},
            )
            return None
        log.info(
            "active condition",
            extra={
                "object": f"{resource.plural}/{objects.name(obj)}",
                "active": condition.status,
                "reason": condition.reason,
                "why": condition.message,
            },
        )
        return stored

    async def perform(
        self,
        action: ManagerAction,
        workload: Mapping[str, Any],
        check: str,
        job: tuple[Resource, Mapping[str, Any]] | None,
    ) -> None:
        """Carry out one dispatch action that writes to the manager (``job``: the owner)."""
        namespace = objects.namespace(workload) or ""
        status_path = WORKLOADS.object_path(
            objects.name(workload), namespace=namespace, subresource="status"
        )
        guard = {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": objects.resource_version(workload),
        }
        operations: list[dict[str, Any]]
        if isinstance(action, SyncJobStatus):
            assert job is not None
            resource, owner = job
            path = resource.object_path(
                objects.name(owner), namespace=namespace, subresource="status"
            )
            owner_guard = {**guard, "value": objects.resource_version(owner)}
            replace = {"op": "replace", "path": "/status", "value": action.status}
            await self.rest.json_patch(
                path, [owner_guard, replace], timeout=self.fence().write_timeout()
            )
            return
        if isinstance(action, SetCheck):
            now = timestamp(self.clock())
            entries = decisions.check_entries(workload, check, action, now)
            operations = [guard, {"op": "add", "path": "/status/admissionChecks", "value": entries}]
            if action.cluster_name:
                operations.append(
                    {"op": "add", "path": "/status/clusterName", "value": action.cluster_name}
                )
                if "nominatedClusterNames" in objects.status(workload):
                    operations.append({"op": "remove", "path": "/status/nominatedClusterNames"})
        elif isinstance(action, Nominate):
            value = list(action.clusters)
            operations = [
                guard,
                {"op": "add", "path": "/status/nominatedClusterNames", "value": value},
            ]
        elif isinstance(action, ClearNomination):
            status = objects.status(workload)
            operations = [guard] + [
                {"op": "remove", "path": f"/status/{field_}"}
                for field_ in ("clusterName", "nominatedClusterNames")
                if field_ in status
            ]
        else:
            conditions = set_condition(
                objects.conditions(workload),
                kind=FINISHED,
                status=True,
                reason=action.reason,
                message=action.message,
                now=self.clock(),
                generation=objects.generation(workload),
            )
            operations = [guard, {"op": "add", "path": "/status/conditions", "value": conditions}]
        await self.rest.json_patch(status_path, operations, timeout=self.fence().write_timeout())
