"""Kubeflow's training jobs as Kueue queues them: replica specs under a run policy.

The MPI operator's MPIJob (``kubeflow.org/v2beta1``) and the Trainer v1
jobs (``kubeflow.org/v1`` PyTorchJob, JAXJob, ...) have the same shape: a
map of replica types to replica specs (``replicas``, default 1, and a pod
template) and a ``runPolicy`` with ``suspend``, ``managedBy`` and an
optional ``schedulingPolicy.priorityClass``; their status has conditions and
per-type ``replicaStatuses``.  A kind is one :class:`ReplicaSpecJob` with its
names and its replica types in Kueue's order (an MPIJob's ``Launcher`` then
``Worker``; a PyTorchJob's ``Master`` then ``Worker``).  As Kueue does
(docs/concepts.md#kubeflow-jobs):

- one pod set per replica type present, in that order, named by the type in
  lower case (``launcher``, ``master``, ``worker``), of ``replicas`` pods;
- suspended through ``runPolicy.suspend``; starting steers each replica's
  pod template to its pod set's flavor, restoring puts them back;
- finished when the ``Succeeded`` or ``Failed`` condition is true (its
  message kept); something runs while a replica type counts active pods;
- the job's PriorityClass is ``runPolicy.schedulingPolicy.priorityClass``,
  else the first replica template's (in order) that names one;
- the rules are the ones every kind shares, "suspended" being
  ``runPolicy.suspend`` (Kueue's webhooks for these kinds add only TAS).

Every method is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.jobs import pod_template
from scheduler.jobs.job_rules import validate_job_kind
from scheduler.jobs.multikueue_copy import CopiedWhole, zeroed_counts
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    finished_by_conditions,
    with_queue_label,
)

_mapping = pod_template.mapping


def run_policy(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_mapping(job.get("spec")).get("runPolicy"))


def is_suspended(job: Mapping[str, Any]) -> bool:
    """``spec.runPolicy.suspend`` is true: pure."""
    return run_policy(job).get("suspend") is True


class ReplicaSpecJob(CopiedWhole):
    """One Kubeflow kind: its names, where its replica specs are, their types in order."""

    def __init__(
        self,
        *,
        framework: str,
        api_version: str,
        kind: str,
        resource: str,
        specs_field: str,
        replica_types: tuple[str, ...],
        access: ApiAccess,
    ) -> None:
        self.framework = framework
        self.api_version = api_version
        self.kind = kind
        self.group = api_version.rpartition("/")[0]
        self.resource = resource
        self.specs_field = specs_field
        """The field of ``spec`` holding the replica specs (``mpiReplicaSpecs``)."""
        self.replica_types = replica_types
        """The replica types that become pod sets, in Kueue's order."""
        self.access = access

    def _specs(self, job: Mapping[str, Any]) -> Mapping[str, Any]:
        return _mapping(_mapping(job.get("spec")).get(self.specs_field))

    def replicas(self, job: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
        """(type, replica spec) of each type present, in Kueue's order: pure."""
        specs = self._specs(job)
        return [
            (name, specs[name])
            for name in self.replica_types
            if isinstance(specs.get(name), Mapping)
        ]

    def _templates(self, job: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """(pod set name, pod template) of each replica of a copied job (created if absent)."""
        specs = job.setdefault("spec", {}).setdefault(self.specs_field, {})
        found = []
        for name in self.replica_types:
            replica = specs.get(name)
            if isinstance(replica, dict):
                found.append((name.lower(), replica.setdefault("template", {})))
        return found

    # -- the protocol ------------------------------------------------------------------------

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        result = []
        for name, replica in self.replicas(job):
            count = replica.get("replicas")
            result.append(
                {
                    "name": name.lower(),
                    "count": count if isinstance(count, int) and not isinstance(count, bool) else 1,
                    "template": copy.deepcopy(dict(_mapping(replica.get("template")))),
                }
            )
        return result

    def is_suspended(self, job: RawObject) -> bool:
        return is_suspended(job)

    def suspend(self, job: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result.setdefault("spec", {}).setdefault("runPolicy", {})["suspend"] = True
        return result

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result.setdefault("spec", {}).setdefault("runPolicy", {})["suspend"] = False
        infos = {info.name: info for info in pod_sets}
        for name, template in self._templates(result):
            info = infos.get(name)
            if info is not None:
                pod_template.steer(template, info)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        recorded = {str(p.get("name")): p for p in pod_sets}
        for name, template in self._templates(result):
            pod_set = recorded.get(name)
            if pod_set is None:
                continue
            pod_template.restore(template, _mapping(pod_set.get("template")))
            if not template["metadata"]:
                del template["metadata"]
        return result

    def finished(self, job: RawObject) -> FinishedState:
        return finished_by_conditions(job, succeeded="Succeeded", kind=self.kind)

    managed_by_at = ("spec", "runPolicy", "managedBy")
    """The Kubeflow kinds keep ``managedBy`` in their ``runPolicy``."""

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """Every replica type's ``active`` zeroed: nothing of the copy runs any more."""
        return zeroed_counts(status, "replicaStatuses", ("active",))

    def active(self, job: RawObject) -> int:
        """The active pods of every replica type (``status.replicaStatuses``)."""
        statuses = _mapping(objects.status(job).get("replicaStatuses"))
        return sum(
            status["active"]
            for status in statuses.values()
            if isinstance(status, Mapping)
            and isinstance(status.get("active"), int)
            and not isinstance(status.get("active"), bool)
        )

    def pods_ready(self, job: RawObject) -> bool:
        """The ``Running`` condition is true (Kueue's ``PodsReady`` for the Kubeflow kinds)."""
        return objects.is_true(job, "Running")

    # -- capabilities ------------------------------------------------------------------------

    def priority_class(self, job: RawObject) -> str:
        policy = _mapping(run_policy(job).get("schedulingPolicy")).get("priorityClass")
        if isinstance(policy, str) and policy:
            return policy
        for _, replica in self.replicas(job):
            name = _mapping(_mapping(replica.get("template")).get("spec")).get("priorityClassName")
            if isinstance(name, str) and name:
                return name
        return ""

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_job_kind(job, None, suspended_when=is_suspended)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_job_kind(
            job,
            old,
            namespace_has_default_queue=facts.namespace_has_default_queue,
            suspended_when=is_suspended,
        )
