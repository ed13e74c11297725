"""The pods the scheduler counts for its jobs, fed by the pod watches.

Part of the scheduler's picture of the cluster (:class:`~scheduler.kube.state.ClusterState`,
which holds one as ``pods``):

- **The pods started for a job** (label ``kueue.x-k8s.io/job-uid``, the
  ``JobPod`` watch) by job UID: live until terminated, so the quota of an
  evicted or finished job is held until its last pod is gone
  (:meth:`PodTracker.live_pods`); of these, the live pods behind the
  elastic-job gate (docs/concepts.md#elastic-jobs), and those being deleted on
  a node, which hold nothing once the node is gone (:meth:`PodTracker.stranded_pods`:
  no kubelet will end them; the pod garbage collector deletes them a minute or so
  later).
- **The pods of a kind with replica groups** (:class:`~scheduler.jobs.ReplicaGroups`:
  LeaderWorkerSets) that are in no group yet: their owner places them.  They
  are kept by the owner's kind, namespace and name, since a pod may be seen
  before its owner; the owners' UIDs are learnt from the job watch
  (:meth:`PodTracker.on_replica_owner`).

A change that may move a job's decision puts the job on the cluster state's
``jobs_to_decide``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import JOB_UID_LABEL, POD_SET_LABEL
from scheduler.jobs import Integration, ReplicaGroups, capability
from scheduler.jobs.elastic import elastic_gated
from scheduler.kube.informer import Event
from scheduler.kube.worklist import WorkList


class PodTracker:
    """The pods of started jobs and the pods waiting for a replica group (module docstring)."""

    def __init__(self, jobs: Mapping[str, Mapping[str, Any]], *, jobs_to_decide: WorkList) -> None:
        self._jobs = jobs
        """The cluster state's jobs by UID (read here, never written)."""
        self._jobs_to_decide = jobs_to_decide
        """The cluster state's work list of jobs to decide again."""
        self._job_pods: dict[str, dict[str, str | None]] = {}
        """Job UID -> pod UID -> the pod set of a pod that has not terminated, None for one that
        has (label job-uid)."""
        self._deleting_on: dict[str, dict[str, str]] = {}
        """Job UID -> pod UID -> the node of a live pod being deleted."""
        self._gated_pods: dict[str, dict[str, dict[str, Any]]] = {}
        """Job UID -> pod UID -> a live pod waiting behind the elastic-job gate."""
        self._replica_owners: dict[tuple[str, str, str], str] = {}
        """(kind, namespace, name) -> UID of an object of a kind with replica groups."""
        self._unplaced: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
        """Owner (kind, namespace, name) -> pod UID -> a pod of it not in a group yet (its kind
        places it); kept by name, since a pod may be seen before its owner."""

    # -- the pods of started jobs --------------------------------------------------------

    def on_job_pod(self, event: Event) -> None:
        """A pod started for a job (label ``kueue.x-k8s.io/job-uid``): live until terminated.

        A pod in its termination grace period is live: the quota of an evicted
        or finished job is held until its last pod is gone.
        """
        job_uid = objects.label(event.object, JOB_UID_LABEL)
        uid = objects.uid(event.object)
        if not job_uid or uid is None:
            return
        pods = self._job_pods.setdefault(job_uid, {})
        before = (uid in pods, pods.get(uid) is not None)
        if event.type == "DELETED":
            pods.pop(uid, None)
        else:
            live = objects.status(event.object).get("phase") not in ("Succeeded", "Failed")
            pods[uid] = (objects.label(event.object, POD_SET_LABEL) or "main") if live else None
        self._track_gated_pod(job_uid, uid, event.object, live=pods.get(uid) is not None)
        node = objects.spec(event.object).get("nodeName")
        deleting = pods.get(uid) is not None and objects.is_being_deleted(event.object)
        moved = self._track_deleting(job_uid, uid, str(node) if deleting and node else None)
        if not pods:
            del self._job_pods[job_uid]
        if moved or before != (uid in pods, pods.get(uid) is not None):
            self._jobs_to_decide.add(job_uid)

    def _track_deleting(self, job_uid: str, uid: str, node: str | None) -> bool:
        """Pod ``uid`` of the job is live and being deleted on ``node`` (None: it is not);
        whether that changed."""
        on = self._deleting_on.setdefault(job_uid, {})
        previous = on.pop(uid, None)
        if node is not None:
            on[uid] = node
        if not on:
            del self._deleting_on[job_uid]
        return previous != node

    def stranded_pods(self, job_key: str, node_exists: Callable[[str], bool]) -> int:
        """How many of the job's live pods are being deleted on a node that no longer exists:
        nothing will end them before the pod garbage collector, and they hold no node."""
        on = self._deleting_on.get(job_key, {})
        return sum(1 for node in on.values() if not node_exists(node))

    def node_gone(self, node: str) -> None:
        """Node ``node`` was deleted: the jobs whose pods were being deleted there may go on."""
        self._jobs_to_decide.update(
            job_uid for job_uid, on in self._deleting_on.items() if node in on.values()
        )

    def _track_gated_pod(self, job_uid: str, uid: str, pod: Mapping[str, Any], live: bool) -> None:
        """Keep the live pods behind the elastic-job gate (docs/concepts.md#elastic-jobs)."""
        gated = self._gated_pods.setdefault(job_uid, {})
        gated.pop(uid, None)
        if live and elastic_gated(pod):
            gated[uid] = dict(pod)
        if not gated:
            del self._gated_pods[job_uid]

    def live_pods(self, job_key: str) -> int:
        """How many pods of the job (by UID) have not terminated, as the watch says."""
        return sum(1 for pod_set in self._job_pods.get(job_key, {}).values() if pod_set is not None)

    def elastic_pods(self, job_key: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """An elastic job's live pods behind the gate, and per pod set its live pods past it."""
        gated = self._gated_pods.get(job_key, {})
        running: dict[str, int] = {}
        for uid, pod_set in self._job_pods.get(job_key, {}).items():
            if pod_set is not None and uid not in gated:
                running[pod_set] = running.get(pod_set, 0) + 1
        return list(gated.values()), running

    # -- the pods waiting for a replica group ----------------------------------------------

    def on_replica_owner(self, event: Event, uid: str) -> None:
        """An object of a kind with replica groups (its UID ``uid``): known by name to the pods
        that name it, until it is deleted."""
        owner = _owner_key(event.object)
        if event.type == "DELETED":
            self._replica_owners.pop(owner, None)
        else:
            self._replica_owners[owner] = uid

    def on_unplaced_pod(self, integration: Integration, event: Event) -> None:
        """A pod of a kind with replica groups, not in a group yet: its owner places it."""
        replicas = capability(integration, ReplicaGroups)
        pod = event.object
        name = replicas.owner_of_pod(pod) if replicas is not None else None
        uid = objects.uid(pod)
        if not name or uid is None:
            return
        owner = (integration.kind, objects.namespace(pod) or "", name)
        pods = self._unplaced.setdefault(owner, {})
        if event.type == "DELETED":
            pods.pop(uid, None)
            if not pods:
                del self._unplaced[owner]
        else:
            pods[uid] = dict(pod)
        owner_uid = self._replica_owners.get(owner)
        if owner_uid is not None:  # else the owner's own event decides it, with this pod
            self._jobs_to_decide.add(owner_uid)

    def unplaced_pods(self, owner_uid: str) -> list[dict[str, Any]]:
        """The pods of an object of a kind with replica groups that are in no group yet."""
        job = self._jobs.get(owner_uid)
        if job is None:
            return []
        return list(self._unplaced.get(_owner_key(job), {}).values())

    def placed(self, owner_uid: str, pod: Mapping[str, Any]) -> None:
        """A pod the scheduler has put into its group leaves the unplaced ones at once."""
        job = self._jobs.get(owner_uid)
        pods = self._unplaced.get(_owner_key(job)) if job is not None else None
        if pods is not None:
            pods.pop(objects.uid(pod) or "", None)


def _owner_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    """An object's kind, namespace and name, as its pods name their owner: pure."""
    return (str(obj.get("kind", "")), objects.namespace(obj) or "", objects.name(obj))
