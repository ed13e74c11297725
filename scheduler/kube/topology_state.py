"""Nodes and Pods as topology-aware scheduling needs them, fed by the Node and Pod watches.

See docs/concepts.md#topology-aware-scheduling.  Every Node and every Pod
bound to one reach the engine (what each node has and what other pods take
of it); the pods a Workload placed by topology are kept per Workload (which
are gated, which run where); and which nodes failed is remembered for
:mod:`scheduler.kube.node_failures`.  Placement waits until every Pod has
been listed once (:meth:`TopologyState.pods_listed`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import workload_key
from scheduler.core.engine import Engine
from scheduler.core.tas.inputs import EPOCH, node_info, not_ready_since, pod_usage
from scheduler.jobs.stray_pods import steered_host
from scheduler.jobs.topology import WORKLOAD_ANNOTATION, is_tas_pod
from scheduler.jobs.topology_ungate import gated
from scheduler.kube.informer import Event
from scheduler.kube.worklist import WorkList, stale


class TopologyState:
    """Nodes, failed nodes and the pods of Workloads placed by topology (module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        engine.cache.topology.pods_known = False  # until every Pod is listed (pods_listed)
        self._pods: dict[str, dict[str, dict[str, Any]]] = {}
        """Workload key -> pod key -> a live pod it placed by topology."""
        self._gone_nodes: set[str] = set()
        """Nodes deleted (or without a Ready condition) not yet reported."""
        self._not_ready: dict[str, datetime] = {}
        """Node -> since when it is not Ready."""
        self._tainted: set[str] = set()
        """Nodes with a ``NoSchedule`` or ``NoExecute`` taint."""
        self._nodes: set[str] = set()
        """Every node that exists."""
        self._steered: dict[str, tuple[str, str]] = {}
        """Pod key -> (its Workload, the node) of a pod steered to a node and not bound yet."""
        self.workloads_to_place = WorkList()
        """Workloads placed by topology whose gated pods may now get their domain."""

    def on_node(self, event: Event) -> None:
        """A Node: its labels, capacity and taints, for topology-aware scheduling; and whether
        it may have failed (deleted, no ``Ready`` condition, not Ready, or tainted), for the
        workloads placed on it (docs/concepts.md#topology-aware-scheduling)."""
        name = objects.name(event.object)
        if event.type == "DELETED":
            self.engine.remove("Node", name)
            self._gone_nodes.add(name)
            self._not_ready.pop(name, None)
            self._tainted.discard(name)
            self._nodes.discard(name)
            return
        self._nodes.add(name)
        info = node_info(event.object)
        self.engine.apply(info)
        if any(taint.effect in ("NoSchedule", "NoExecute") for taint in info.taints):
            self._tainted.add(name)
        else:
            self._tainted.discard(name)
        since = not_ready_since(event.object)
        if since is None:
            self._not_ready.pop(name, None)
        elif since == EPOCH:
            self._gone_nodes.add(name)  # no Ready condition at all: failed at once, as Kueue
        else:
            self._not_ready.setdefault(name, since)

    def gone_nodes(self) -> list[str]:
        """Nodes deleted (or without a ``Ready`` condition) since the last call."""
        gone, self._gone_nodes = sorted(self._gone_nodes), set()
        return gone

    def has_node(self, name: str) -> bool:
        """Whether the node exists, as the watch says."""
        return name in self._nodes

    def steered_pods(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(Workload, node, pod) of the pods steered to a node and not bound yet."""
        found = []
        for pod_key, (workload, node) in sorted(self._steered.items()):
            pod = self._pods.get(workload, {}).get(pod_key)
            if pod is not None:
                found.append((workload, node, pod))
        return found

    def pod_failed(self, pod: dict[str, Any]) -> None:
        """A steered pod kuota just failed: no longer steered, before the watch says so."""
        self._steered.pop(f"{objects.namespace(pod) or ''}/{objects.name(pod)}", None)

    def tainted_nodes(self) -> list[str]:
        """Nodes with a ``NoSchedule`` or ``NoExecute`` taint now."""
        return sorted(self._tainted)

    def not_ready_nodes(self) -> dict[str, datetime]:
        """Nodes that are not Ready now, and since when."""
        return dict(self._not_ready)

    def live_pods_on(self, workload: str, node: str) -> int:
        """Pods of a Workload placed by topology still running on ``node`` (bound there, not
        finished, not being deleted), as the watch says."""
        return sum(
            1
            for pod in self._pods.get(workload, {}).values()
            if objects.spec(pod).get("nodeName") == node
            and not objects.metadata(pod).get("deletionTimestamp")
        )

    def on_pod(self, event: Event) -> None:
        """Any Pod: what it takes on its node, and (placed by topology) whether it waits for
        its domain (docs/concepts.md#topology-aware-scheduling)."""
        pod = event.object
        name, namespace = objects.name(pod), objects.namespace(pod) or ""
        if event.type == "DELETED":
            self.engine.remove("Pod", name, namespace)
        else:
            self.engine.apply(pod_usage(pod))
        workload = objects.annotation(pod, WORKLOAD_ANNOTATION)
        if not workload or not is_tas_pod(objects.annotations(pod)):
            return
        key = workload_key(namespace, workload)
        pods = self._pods.setdefault(key, {})
        pod_key = f"{namespace}/{name}"
        if stale(event, pods.get(pod_key)):
            return
        finished = objects.status(pod).get("phase") in ("Succeeded", "Failed")
        self._steered.pop(pod_key, None)
        if event.type == "DELETED" or finished:
            pods.pop(pod_key, None)
            if not pods:
                del self._pods[key]
            return
        pods[pod_key] = dict(pod)
        host = steered_host(pod)
        if host is not None:
            self._steered[pod_key] = (key, host)
        if gated(pod):
            self.workloads_to_place.add(key)

    def pods_listed(self) -> None:
        """Every Pod is now known: what nodes hold is complete, placement may go on."""
        self.engine.pods_known()

    def has_pods(self, workload: str) -> bool:
        """Whether a Workload has live pods placed by topology."""
        return workload in self._pods

    def tas_pods(self, workload: str) -> list[dict[str, Any]]:
        """The live pods a Workload placed by topology has, as the watch says."""
        return list(self._pods.get(workload, {}).values())


__all__ = ["TopologyState"]
