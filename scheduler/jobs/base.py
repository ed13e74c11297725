"""The small protocol every Job integration implements (DESIGN.md, layer 2).

Kueue manages many kinds of batch jobs (batch/v1 Job first, JobSet next) with
one controller; what differs between kinds is captured here as a handful of
pure functions over the raw object (a ``dict`` as read from the API or a YAML
file): which queue it asks for, which pod sets it needs, whether it is
suspended, how to start it on the admitted flavors, how to restore it after
an eviction, and whether it has finished; and, for the admission webhook,
how a new object is defaulted (the default queue, suspended) and which rules
it must follow on create and update.  Every function returns new data and
never mutates its argument, so the webhook, the scheduler's reconciler and
``kuota simulate`` can share them without coordination.

Each integration is one package, ``scheduler/jobs/<kind>/`` (``batchjob``,
``jobset``), whose ``__init__`` registers its integration object
(:mod:`scheduler.jobs.registry`); the webhook paths, the webhook
registrations, the scheduler's watches, ``kuota validate`` and ``kuota
simulate`` all find the kind through the registry.  Adding a kind means
adding one folder (and importing it in :mod:`scheduler.jobs`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.api.refs import QUEUE_NAME_LABEL

RawObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PodSetInfo:
    """What the admission adds to one pod set when the job starts (scheduling.md 6.3)."""

    name: str
    count: int
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FinishedState:
    """Whether the job is done, and how (for the Workload's ``Finished`` condition)."""

    finished: bool
    reason: str = ""
    message: str = ""


def finished_by_conditions(job: Mapping[str, Any], *, succeeded: str, kind: str) -> FinishedState:
    """Pure: Kueue's rule for kinds that end with a condition: ``succeeded`` or ``Failed`` True.

    The condition's message is kept; without one, ``"<kind> finished
    successfully"`` or ``"<kind> failed"`` (batch/v1 Job: ``Complete``;
    JobSet: ``Completed``).
    """
    for condition in objects.conditions(job):
        if condition.get("status") != "True":
            continue
        message = str(condition.get("message") or "")
        if condition.get("type") == succeeded:
            return FinishedState(True, "Succeeded", message or f"{kind} finished successfully")
        if condition.get("type") == "Failed":
            return FinishedState(True, "Failed", message or f"{kind} failed")
    return FinishedState(False)


@dataclass(frozen=True, slots=True)
class AdmissionFacts:
    """What the webhook knows about a request beyond the object itself (it looks them up).

    ``namespace_has_default_queue``: the namespace has a LocalQueue named
    ``default`` (JOB-U2); ``managed``: kuota manages this object (queued in a
    managed namespace, or managed without a queue name); ``by_scheduler``:
    the request comes from kuota's scheduler.  ``kuota validate`` knows none
    of them and passes the defaults.
    """

    namespace_has_default_queue: bool = False
    managed: bool = False
    by_scheduler: bool = False


NO_FACTS: Final = AdmissionFacts()


@runtime_checkable
class JobIntegration(Protocol):
    """One kind of batch job, as Kueue sees it.  Every method is pure."""

    framework: str
    """The name used in the Configuration's ``integrations.frameworks`` (``batch/job``)."""
    api_version: str
    kind: str
    group: str
    resource: str
    """The plural resource name (``jobs``): webhook rules, watches, writes."""

    def queue_name(self, job: RawObject) -> str:
        """The LocalQueue the job asks for, ``""`` when none."""
        ...

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        """The raw v1beta2 ``spec.podSets`` of the job's Workload."""
        ...

    def is_suspended(self, job: RawObject) -> bool: ...

    def suspend(self, job: RawObject) -> dict[str, Any]:
        """A copy of the job, suspended."""
        ...

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        """A copy of the job, unsuspended and steered to the admitted flavors."""
        ...

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A copy of the job with the pod templates recorded in its Workload put back."""
        ...

    def finished(self, job: RawObject) -> FinishedState: ...

    def active(self, job: RawObject) -> int:
        """What the job still runs (pods, child Jobs): 0 once a stop has taken effect."""
        ...

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        """A copy of a new job as the mutating webhook leaves it (validation.md 1.3).

        ``queue``: the LocalQueue to set when the job names none (the
        namespace's ``default``); ``suspend``: kuota manages the job, which
        must not start before its Workload is admitted.
        """
        ...

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        """The kind's admission rules on CREATE, in the order of its rule table."""
        ...

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        """The kind's admission rules on UPDATE (the create rules run again on ``job``)."""
        ...


def with_queue_label(job: RawObject, queue: str | None) -> dict[str, Any]:
    """A copy of ``job`` with ``kueue.x-k8s.io/queue-name: queue`` (when given): pure."""
    result = copy.deepcopy(dict(job))
    if queue:
        metadata = result.setdefault("metadata", {})
        labels = metadata.get("labels")
        metadata["labels"] = {
            **(labels if isinstance(labels, dict) else {}),
            QUEUE_NAME_LABEL: queue,
        }
    return result


def webhook_path(integration: JobIntegration, verb: Literal["mutate", "validate"]) -> str:
    """Kueue's path of a kind's webhook: pure.

    ``/mutate-batch-v1-job``, ``/validate-jobset-x-k8s-io-v1alpha2-jobset``.
    """
    version = integration.api_version.rpartition("/")[2]
    return f"/{verb}-{integration.group.replace('.', '-')}-{version}-{integration.kind.lower()}"
