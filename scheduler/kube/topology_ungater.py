"""Lifting the topology gate: each gated pod of a Workload placed by topology gets its domain.

See docs/concepts.md#topology-aware-scheduling.  Which pod goes where is
decided by :func:`scheduler.jobs.topology_ungate.pods_to_ungate`; here each
pod is patched (gate off, the domain's level labels added to its node
selector) with a guarded JSON patch, so a pod that changed meanwhile is
decided again from the version the watch delivers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION, JOB_UID_LABEL
from scheduler.jobs.topology_ungate import pods_to_ungate, ungated_copy
from scheduler.kube.informer import Event
from scheduler.kube.rest import Conflict, NotFound, RestError, Unreachable
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer

log = logging.getLogger("kuota.scheduler")


class TopologyUngater:
    """Ungates the pods of the Workloads the state marked (``workloads_to_place``)."""

    def __init__(self, *, state: ClusterState, writer: Writer) -> None:
        self.state = state
        self.writer = writer

    async def ungate(self) -> bool:
        """One pass over the marked Workloads; True when a pod was ungated."""
        acted = False
        for key in sorted(self.state.workloads_to_place.take()):
            workload = self._deciding(key)
            if workload is None:
                continue
            for item in pods_to_ungate(workload, self.state.topology.tas_pods(key)):
                with logs.bind(object=key):
                    acted = await self._ungate_one(key, item.pod, item.node_selector) or acted
        return acted

    def _deciding(self, key: str) -> Mapping[str, Any] | None:
        """The Workload whose placement the pods under ``key`` follow.

        The pods of an elastic job are marked with its first slice; after a
        scale-up, the slice that replaced it holds their placement
        (docs/concepts.md#elastic-jobs).
        """
        workload = self.state.stored("Workload").get(key)
        if workload is None or objects.annotation(workload, ELASTIC_JOB_ANNOTATION) != "true":
            return workload
        job_uid = objects.label(workload, JOB_UID_LABEL)
        current = self.state.slices_for(job_uid).current if job_uid else None
        return current if current is not None else workload

    async def _ungate_one(
        self, key: str, pod: Mapping[str, Any], selector: Mapping[str, str]
    ) -> bool:
        try:
            stored = await self.writer.patch_job(pod, ungated_copy(pod, selector))
        except (Conflict, NotFound):
            self.state.workloads_to_place.add(key)  # decided again from the fresh pod
            return False
        except Unreachable as failure:
            self.state.workloads_to_place.add(key)
            log.warning("ungating a pod got no answer; will retry", extra={"error": str(failure)})
            return False
        except RestError as failure:
            log.error("could not ungate a pod", extra={"error": str(failure)})
            return False
        self.state.topology.on_pod(Event("MODIFIED", stored, objects.key(stored)))
        log.info(
            "pod ungated into its topology domain",
            extra={"pod": objects.key(pod), "nodeSelector": dict(selector)},
        )
        return True


__all__ = ["TopologyUngater"]
