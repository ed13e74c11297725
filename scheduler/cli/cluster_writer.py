"""The one place where the ``kuota`` command writes to a cluster: ``stop`` and ``resume``.

Reads one object, finds a Job's Workload, and merge-patches one object
(the patch carries the resourceVersion read, so a concurrent change fails
instead of being overwritten), through the user's kubeconfig and with the
user's rights.  Failures become :class:`scheduler.cli.control.ControlFailed`
with the API server's own words (NotFound, Forbidden, a conflict).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from scheduler.api import objects
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP
from scheduler.cli.control import ControlFailed
from scheduler.kube.client import connect
from scheduler.kube.rest import Conflict, NotFound, Resource, Rest, RestError

PLURALS = {"clusterqueue": "clusterqueues", "localqueue": "localqueues", "workload": "workloads"}
JOBS = Resource("batch", "v1", "jobs")
T = TypeVar("T")


def _resource(kind: str) -> Resource:
    return Resource(KUEUE_GROUP, HUB_VERSION, PLURALS[kind])


class KubeCluster:
    """:class:`scheduler.cli.control.Cluster` through a kubeconfig file."""

    def __init__(self, kubeconfig: str) -> None:
        paths = [Path(part).expanduser() for part in kubeconfig.split(":") if part]
        if not any(path.is_file() for path in paths):
            raise ControlFailed(
                f"no kubeconfig file at {kubeconfig}; pass --kubeconfig or set KUBECONFIG"
            )
        self.kubeconfig = kubeconfig

    def _call(self, step: Callable[[Rest], Awaitable[T]], what: str) -> T:
        async def go() -> T:
            async with connect(self.kubeconfig) as api:
                return await step(Rest(api, timeout=30))

        try:
            return asyncio.run(go())
        except NotFound:
            raise ControlFailed(f"{what} not found") from None
        except Conflict:
            raise ControlFailed(f"{what} changed while this command ran; run it again") from None
        except RestError as failure:
            raise ControlFailed(f"{what}: {failure}") from None

    def read(self, kind: str, name: str, namespace: str | None) -> dict[str, Any]:
        path = _resource(kind).object_path(name, namespace=namespace)
        return self._call(lambda rest: rest.get(path), _what(kind, name, namespace))

    def workload_of_job(self, name: str, namespace: str) -> dict[str, Any]:
        async def find(rest: Rest) -> dict[str, Any]:
            job = await rest.get(JOBS.object_path(name, namespace=namespace))
            listed = await rest.list(_resource("workload").collection_path(namespace))
            uid = objects.uid(job)
            for workload in listed.get("items") or []:
                if objects.owner_job_uid(workload) == uid:
                    return dict(workload)
            raise ControlFailed(f"Job {namespace}/{name} has no Workload (is it queued?)")

        return self._call(find, f"Job {namespace}/{name}")

    def patch(
        self, kind: str, name: str, namespace: str | None, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        path = _resource(kind).object_path(name, namespace=namespace)
        return self._call(lambda rest: rest.merge_patch(path, body), _what(kind, name, namespace))


def _what(kind: str, name: str, namespace: str | None) -> str:
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


__all__ = ["KubeCluster"]
