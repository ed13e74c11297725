"""Letting go of ``kueue.x-k8s.io/resource-in-use``: deleted queues and flavors really go.

The webhook puts the finalizer on every ClusterQueue and ResourceFlavor it
admits (``scheduler.api.defaults``), so that neither disappears while it is
in use.  This module takes it off again, by Kueue's rules:

- a **ClusterQueue** being deleted keeps it while any Workload holds a quota
  reservation in it.  The engine is the judge (the state has made the
  queue terminating: it admits nothing new, see :mod:`scheduler.kube.state`);
  the finalizer goes as soon as the engine counts no reservation in it,
  which is at once when nothing was admitted;
- a **Workload** that carries it (kuota does not add it; Kueue and tools that
  create Workloads do) keeps it until it is finished, or is being deleted
  while it holds no quota;
- a **ResourceFlavor** being deleted keeps it while any ClusterQueue that
  still exists (terminating ones included) names it in
  ``spec.resourceGroups[].flavors[].name``
  (Kueue's ``ClusterQueuesUsingFlavor``).

The removal is a *guarded* JSON patch computed from the object as the state
holds it: test its ``resourceVersion``, test that the finalizer is at the
index about to be removed, remove that index.  If anything moved, the API
server refuses the whole patch (a conflict) and the next turn decides again
from the object the watch delivers.  Other finalizers are left alone.

The scheduler calls :meth:`FinalizerReleaser.release` once per turn, so only
the leader writes; checking costs one pass over the queues and flavors the
state holds, and a write happens only for an object being deleted.  The
state is left to the watch (a ClusterQueue gone from the API server stays
"in use" for its flavors until its DELETED event, as in Kueue); meanwhile
the same version of an object is not patched twice, and one whose patch
failed for another reason (say 403) is not tried again until it changes or
:data:`RETRY_SECONDS` pass, so a turn loop never hammers the API server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.api.refs import RESOURCE_IN_USE_FINALIZER
from scheduler.core.engine import Engine
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer, kueue_resource, version_test

log = logging.getLogger("kuota.finalizers")
RETRY_SECONDS = 10.0


def finalizer_removal(obj: Mapping[str, Any], finalizer: str) -> list[dict[str, Any]] | None:
    """The guarded JSON patch that removes ``finalizer`` from ``obj``; None if absent: pure."""
    finalizers = objects.metadata(obj).get("finalizers")
    if not isinstance(finalizers, list) or finalizer not in finalizers:
        return None
    index = finalizers.index(finalizer)
    path = f"/metadata/finalizers/{index}"
    return [
        version_test(obj),
        {"op": "test", "path": path, "value": finalizer},
        {"op": "remove", "path": path},
    ]


def flavors_named(cluster_queue: Mapping[str, Any]) -> set[str]:
    """Every flavor a ClusterQueue names in its resource groups: pure."""
    named: set[str] = set()
    groups = objects.spec(cluster_queue).get("resourceGroups")
    for group in groups if isinstance(groups, list) else []:
        flavors = group.get("flavors") if isinstance(group, Mapping) else None
        for flavor in flavors if isinstance(flavors, list) else []:
            if isinstance(flavor, Mapping) and flavor.get("name"):
                named.add(str(flavor["name"]))
    return named


def releasable_cluster_queues(
    cluster_queues: Mapping[str, Mapping[str, Any]], reserving: Callable[[str], bool]
) -> Iterator[str]:
    """ClusterQueues being deleted, with the finalizer, that hold no reservation: pure."""
    for name, queue in cluster_queues.items():
        if objects.is_being_deleted(queue) and finalizer_removal(queue, RESOURCE_IN_USE_FINALIZER):
            if not reserving(name):
                yield name


def releasable_flavors(
    flavors: Mapping[str, Mapping[str, Any]], cluster_queues: Mapping[str, Mapping[str, Any]]
) -> Iterator[str]:
    """ResourceFlavors being deleted, with the finalizer, that no ClusterQueue names: pure."""
    deleting = [
        name
        for name, flavor in flavors.items()
        if objects.is_being_deleted(flavor) and finalizer_removal(flavor, RESOURCE_IN_USE_FINALIZER)
    ]
    if not deleting:
        return
    in_use = set().union(*(flavors_named(queue) for queue in cluster_queues.values()))
    yield from (name for name in deleting if name not in in_use)


def releasable_workload(workload: Mapping[str, Any]) -> bool:
    """A Workload with the finalizer that no longer needs it: finished, or being deleted while
    it holds no quota (Kueue's workload controller lets go then): pure."""
    if finalizer_removal(workload, RESOURCE_IN_USE_FINALIZER) is None:
        return False
    if objects.is_finished(workload):
        return True
    return objects.is_being_deleted(workload) and not objects.has_quota_reservation(workload)


def holds_reservations(engine: Engine, cluster_queue: str) -> bool:
    """Whether any Workload holds quota in ``cluster_queue`` by the engine's count (read-only).

    Read from the engine's reservation index rather than
    :meth:`EngineView.cluster_queue_status`, which knows only the ClusterQueues
    it holds: a queue already being deleted when this scheduler started was
    never applied, yet its Workloads' reservations are counted all the same.
    """
    return engine.view.holds_reservations(cluster_queue)


class FinalizerReleaser:
    """Removes the resource-in-use finalizer when the rules of the module docstring allow."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        writer: Writer,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.state = state
        self.writer = writer
        self.monotonic = monotonic
        self._tried: dict[str, tuple[str | None, float, bool]] = {}
        """``plural/name`` -> (resourceVersion, when, done) of the last patch of that object."""

    async def release(self) -> None:
        """One pass: remove every finalizer that may go now."""
        queues = self.state.stored("ClusterQueue")
        for name in list(
            releasable_cluster_queues(queues, lambda cq: holds_reservations(self.engine, cq))
        ):
            await self._remove("clusterqueues", queues[name])
        flavors = self.state.stored("ResourceFlavor")
        for name in list(releasable_flavors(flavors, queues)):
            await self._remove("resourceflavors", flavors[name])
        await self._release_workloads()
        for key in list(self._tried):  # forget objects the state no longer holds
            plural, name = key.split("/", 1)
            if name not in (queues if plural == "clusterqueues" else flavors):
                del self._tried[key]

    async def _release_workloads(self) -> None:
        """The finalizer off every Workload marked since the last pass that may let it go (by
        an update: the scheduler updates Workloads, it does not patch them)."""
        workloads = self.state.stored("Workload")
        for key in sorted(self.state.workloads_to_finalize.take()):
            workload = workloads.get(key)
            if workload is None or not releasable_workload(workload):
                continue
            metadata: dict[str, Any] = dict(objects.metadata(workload))
            kept = metadata.get("finalizers")
            metadata["finalizers"] = [
                name
                for name in (kept if isinstance(kept, list) else [])
                if name != RESOURCE_IN_USE_FINALIZER
            ]
            with logs.bind(object=key):
                try:
                    stored = await self.writer.update_workload(
                        workload, {**workload, "metadata": metadata}
                    )
                except (Conflict, NotFound):
                    continue  # moved or gone: the watch brings the fresh object, marked again
                except RestError as failure:
                    log.warning(
                        "could not remove the finalizer",
                        extra={"object": key, "error": str(failure)},
                    )
                    continue
                self.state.remember(stored)
                log.info(
                    "finalizer removed from a workload that no longer needs it",
                    extra={"object": key, "finalizer": RESOURCE_IN_USE_FINALIZER},
                )

    def _settled(self, key: str, version: str | None) -> bool:
        """Whether this version of the object was patched already, or refused recently."""
        tried = self._tried.get(key)
        if tried is None or tried[0] != version:
            return False
        _, when, done = tried
        return done or self.monotonic() - when < RETRY_SECONDS

    async def _remove(self, plural: str, obj: dict[str, Any]) -> None:
        name, version = objects.name(obj), objects.resource_version(obj)
        key = f"{plural}/{name}"
        operations = finalizer_removal(obj, RESOURCE_IN_USE_FINALIZER)
        if operations is None or self._settled(key, version):
            return
        path = kueue_resource(plural).object_path(name)
        with logs.bind(object=key):
            try:
                # Through the writer's one write path: counted, timed and fenced.
                await self.writer._timed(
                    "patch",
                    plural,
                    lambda timeout: self.writer.rest.json_patch(path, operations, timeout=timeout),
                )
            except (Conflict, NotFound):
                return  # moved or gone: the watch brings the fresh object
            except RestError as failure:
                self._tried[key] = (version, self.monotonic(), False)
                log.warning(
                    "could not remove the finalizer", extra={"object": key, "error": str(failure)}
                )
                return
            self._tried[key] = (version, self.monotonic(), True)
            log.info(
                "finalizer removed, deletion proceeds",
                extra={"object": key, "finalizer": RESOURCE_IN_USE_FINALIZER},
            )
