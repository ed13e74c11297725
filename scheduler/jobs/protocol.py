"""What a kind of job is to kuota: a small required protocol plus declared capabilities.

Kueue manages many kinds of workloads with one framework; what differs
between kinds is captured here, as Kueue's jobframework has ``GenericJob``
and its ``JobWith…`` interfaces (docs/architecture.md, "Integrations"):

- :class:`Integration`: the names of a kind (framework, apiVersion, kind,
  resource); every registered kind is one.
- :class:`JobIntegration`: a kind whose objects get Workloads: which queue,
  which pod sets, suspended or not, how to start it on the admitted
  flavors, how to restore it after an eviction, finished, still active.
- Capabilities a kind declares by implementing them: created suspended
  (:class:`SuspendOnCreate`), admission rules (:class:`AdmissionRules`),
  gated at creation instead (:class:`GateOnCreate`), queued through its pods
  (:class:`QueuedThroughPods`), its own controller decision
  (:class:`OwnController`), objects forming groups (:class:`PodGroups`),
  whether its pods are ready (:class:`PodsReadiness`, :class:`GroupPodsReadiness`),
  finished pods giving their quota back early (:class:`ReclaimablePods`),
  replicas queued as pod groups (:class:`ReplicaGroups`), a start time to
  clear before a restore (:class:`StartTimeBlocksRestore`), a PriorityClass
  of the whole job (:class:`JobPriorityClass`).
  The webhook's paths and registrations, the scheduler's watches and
  controller, ``kuota validate`` and ``kuota simulate`` ask the registry
  which kinds have which capability; nothing outside a kind's folder names
  the kind.

Every method is pure and returns new data, never mutating its argument, so
the webhook, the scheduler and ``kuota simulate`` share them without
coordination.  Each integration is one package, ``scheduler/jobs/<kind>/``,
registered by one line of :mod:`scheduler.jobs.kinds`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, runtime_checkable

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.field import FieldError
from scheduler.api.refs import QUEUE_NAME_LABEL

if TYPE_CHECKING:  # the controller's types refer back to this module's
    from scheduler.jobs.actions import Action, GroupAction
    from scheduler.jobs.start_placement import FlavorPlacement
    from scheduler.jobs.workload_from_job import PriorityClasses

RawObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PodSetInfo:
    """What the admission adds to one pod set when the job starts.

    See docs/concepts.md#how-a-job-is-suspended-admitted-and-started.
    """

    name: str
    count: int
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    scheduling_gates: tuple[str, ...] = ()
    """Gates its pods are created with: ``kueue.x-k8s.io/topology`` for a pod set placed by
    topology (docs/concepts.md#topology-aware-scheduling)."""


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
    the request comes from kuota's scheduler; ``elastic_jobs``: the gate
    ``ElasticJobsViaWorkloadSlices`` of the Configuration.  ``kuota validate``
    knows none of them and passes the defaults (the gate at kuota's default).
    """

    namespace_has_default_queue: bool = False
    managed: bool = False
    by_scheduler: bool = False
    elastic_jobs: bool = True


NO_FACTS: Final = AdmissionFacts()


@dataclass(frozen=True, slots=True)
class ApiAccess:
    """What kuota's processes do to the objects of a kind, as RBAC verbs by resource.

    Declared next to the code that does it (as Kueue declares RBAC markers in
    each integration); the chart's ClusterRoles are generated from these
    (``charts/kuota/hack/generate.py``), so a kind's permissions come and go
    with its folder.  Keys are the resource or ``resource/subresource``.
    """

    scheduler: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    webhook: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    multikueue: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """On the manager, for a kind with a MultiKueue adapter (the owner read, status copied)."""


@runtime_checkable
class Integration(Protocol):
    """A kind kuota knows (Kueue's integration): its names, and nothing it must do.

    Every registered kind is one; what it does is declared by the protocols
    it also satisfies: :class:`JobIntegration` (its objects have Workloads)
    and the capabilities below.  Capabilities are checked with ``isinstance``
    once, by the registry (:func:`scheduler.jobs.registry.capability`).
    """

    framework: str
    """The name used in the Configuration's ``integrations.frameworks`` (``batch/job``)."""
    api_version: str
    kind: str
    group: str
    resource: str
    """The plural resource name (``jobs``): webhook rules, watches, writes."""
    access: ApiAccess
    """What the scheduler and the webhook do to the kind's objects (the chart's RBAC)."""


@runtime_checkable
class JobIntegration(Integration, Protocol):
    """A kind whose objects are queued as Workloads.  Every method is pure."""

    def queue_name(self, job: RawObject) -> str:
        """The LocalQueue the job asks for, ``""`` when none."""
        ...

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        """The raw v1beta2 ``spec.podSets`` of the job's Workload."""
        ...

    def is_suspended(self, job: RawObject) -> bool:
        """Whether the job runs nothing until admitted (suspended, or gated)."""
        ...

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


# -- capabilities: what a kind declares beyond the required protocol --------------------


@runtime_checkable
class SuspendOnCreate(Protocol):
    """The kind can be created suspended: the generic mutating webhook does it.

    Kueue's ``GenericJob`` default: a queued job gets ``suspend`` (and the
    namespace's default queue) at creation, before its controller sees it.
    """

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        """A copy of a new job as the mutating webhook leaves it (docs/validation.md#job-mutation).

        ``queue``: the LocalQueue to set when the job names none (the
        namespace's ``default``); ``suspend``: kuota manages the job, which
        must not start before its Workload is admitted.
        """
        ...


@runtime_checkable
class AdmissionRules(Protocol):
    """The kind has validation rules: a validating webhook path and ``kuota validate``."""

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        """The kind's admission rules on CREATE, in the order of its rule table."""
        ...

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        """The kind's admission rules on UPDATE (the create rules run again on ``job``)."""
        ...


@runtime_checkable
class GateOnCreate(Protocol):
    """The kind cannot be suspended once it runs: it is held back at creation instead.

    A Pod waits behind a scheduling gate.  The webhook gates a queued object
    on CREATE (and marks it managed); the scheduler watches only the objects
    so marked (``managed_label_selector``), and stops one by deleting it.
    """

    managed_label_selector: str
    """The label selector of the objects the webhook took in (the scheduler's watch)."""

    def gate_on_create(
        self, obj: RawObject, *, without_queue_name: bool = False
    ) -> dict[str, Any] | None:
        """The object as the mutating webhook leaves it, or None to leave it alone.

        ``without_queue_name``: the Configuration's ``manageJobsWithoutQueueName``
        (an object without a queue name is held back too).
        """
        ...


@runtime_checkable
class QueuedThroughPods(Protocol):
    """The kind has no Workload of its own: its pods are queued (Deployment, StatefulSet).

    The mutating webhook marks the pod templates on CREATE and UPDATE, so the
    pods the kind's controller makes are gated and queued by the ``pod``
    integration.  The scheduler does not watch such a kind, unless it also
    has :class:`ReplicaGroups` (its Workloads are made from it).
    """

    def propagate(self, obj: RawObject) -> dict[str, Any]:
        """A copy of a queued object whose pod templates are marked for the pod webhook."""
        ...


@runtime_checkable
class OwnController(Protocol):
    """The kind's life cycle differs from a suspendable job's: it decides its next action.

    A Pod cannot be suspended or restored: an evicted one is stopped by
    deletion and its finalizer taken off (docs/concepts.md).
    """

    def next_action(
        self,
        job: RawObject,
        workload: RawObject | None,
        *,
        flavors: Mapping[str, FlavorPlacement],
        priority_classes: PriorityClasses | None = None,
        copied: CopiedMetadata = NOTHING_COPIED,
    ) -> Action | None:
        """The one thing to do for ``job`` now, or None when it is where it should be.

        ``copied``: the job labels and annotations its Workload carries
        (``integrations.labelKeysToCopy``, the Workload custom metric labels).
        """
        ...


@runtime_checkable
class PodGroups(Protocol):
    """Several objects of the kind form one job (Kueue's composable job: pod groups).

    Objects that name a group are reconciled together under the group's key;
    the group has one Workload.
    """

    def group_key(self, obj: RawObject) -> str | None:
        """The key of the group ``obj`` belongs to; None for an object on its own."""
        ...

    def group_key_of_workload(self, workload: RawObject) -> str | None:
        """The group whose Workload this is, if it is one."""
        ...

    def next_group_action(
        self,
        members: Sequence[RawObject],
        workload: RawObject | None,
        *,
        flavors: Mapping[str, FlavorPlacement],
        priority_classes: PriorityClasses | None = None,
        copied: CopiedMetadata = NOTHING_COPIED,
    ) -> GroupAction | None:
        """The one thing to do for a group now, or None (``copied``: as ``next_action``'s)."""
        ...


@dataclass(frozen=True, slots=True)
class ReclaimableCount:
    """Pods of one pod set whose quota the job no longer needs (``status.reclaimablePods``)."""

    name: str
    count: int


@runtime_checkable
class ReclaimablePods(Protocol):
    """Finished pods give their quota back while the rest still run (Kueue's
    ``JobWithReclaimablePods``; docs/concepts.md#reclaimable-pods).

    The Job controller writes the counts into the Workload's
    ``status.reclaimablePods``; the engine then counts ``count - reclaimable``
    pods of each pod set (docs/scheduling.md#workload-usage).
    """

    def reclaimable_pods(self, job: RawObject) -> list[ReclaimableCount]:
        """Per pod set, how many of its pods' quota is no longer needed (none: empty)."""
        ...


@runtime_checkable
class PodsReadiness(Protocol):
    """The kind can say whether its pods are ready (Kueue's ``PodsReady()``, waitForPodsReady).

    The Workload's ``PodsReady`` condition follows it while the job runs;
    kinds differ in what they count (a Job: ready plus succeeded pods against
    its parallelism; a JobSet: per replicated job; a Pod: its ``Ready``
    condition).  A kind without it gets no ``PodsReady`` condition.
    """

    def pods_ready(self, job: RawObject) -> bool:
        """Whether the job's pods are all ready (or done) now."""
        ...


@runtime_checkable
class GroupPodsReadiness(Protocol):
    """The readiness of a group of objects forming one job (:class:`PodGroups`)."""

    def group_pods_ready(self, members: Sequence[RawObject]) -> bool:
        """Whether every member the group needs exists and is ready."""
        ...


@runtime_checkable
class JobPriorityClass(Protocol):
    """The kind names a PriorityClass for the whole job, ahead of its pod templates'.

    Kueue's ``JobWithPriorityClass``: a Kubeflow job's
    ``runPolicy.schedulingPolicy.priorityClass``.  Without it, the first pod
    set that names one decides (docs/concepts.md#from-job-to-workload).
    """

    def priority_class(self, job: RawObject) -> str:
        """The job's PriorityClass, ``""`` when it names none of its own."""
        ...


@runtime_checkable
class ScaledThroughChild(Protocol):
    """The kind's pod counts follow an object its controller made and scales.

    An elastic RayJob or RayService with in-tree autoscaling: KubeRay's
    autoscaler writes the ``replicas`` of the RayCluster KubeRay made for it,
    not of the queued object.  The scheduler decides such a job as seen
    through that child (:meth:`as_scaled`), so a scale-up becomes a new
    workload slice and a scale-down shrinks the Workload, as for an elastic
    RayCluster (docs/concepts.md#elastic-jobs).  Only with the gate
    ``ElasticJobsViaWorkloadSlices`` on.
    """

    def scaling_child(self, job: RawObject) -> str | None:
        """The name of the child (same namespace, controlled by ``job``) whose counts it takes,
        None when it follows none (not elastic, not autoscaling, no child yet)."""
        ...

    def as_scaled(self, job: RawObject, child: RawObject) -> dict[str, Any]:
        """``job`` with the counts ``child`` has now: what the controller decides from. Pure."""
        ...


@dataclass(frozen=True, slots=True)
class ReferencedKind:
    """A kind whose objects a job refers to for its pod sets (the scheduler watches it)."""

    api_version: str
    kind: str
    resource: str
    """The plural resource name (``clustertrainingruntimes``): watches and RBAC."""


@dataclass(frozen=True, slots=True)
class Reference:
    """One object a job refers to: ``namespace`` is None for a cluster-scoped kind."""

    api_version: str
    kind: str
    name: str
    namespace: str | None


@runtime_checkable
class ResolvedThroughReference(Protocol):
    """The kind's pod sets come from another object it names, not from itself alone.

    A TrainJob names a runtime (a ClusterTrainingRuntime or a
    TrainingRuntime) whose template, patched by the TrainJob, is what its
    pods run.  The scheduler watches the referenced kinds and decides such a
    job as resolved against the object it names (:meth:`resolved`); a job
    whose object is not there waits, with a Warning Event saying so, and the
    webhook runs the kind's rules on the resolved job when the object can be
    read (docs/concepts.md#trainjob).
    """

    referenced_kinds: tuple[ReferencedKind, ...]

    def reference(self, job: RawObject) -> Reference | None:
        """The object ``job`` names, None when it names nothing kuota can read."""
        ...

    def resolved(self, job: RawObject, referenced: RawObject) -> dict[str, Any]:
        """``job`` with what it takes from ``referenced``: what its other methods read. Pure."""
        ...

    def referenced_errors(self, referenced: RawObject) -> list[str]:
        """What is wrong with ``referenced`` for deriving pod sets, as its schema would refuse
        it: for inputs no API server checked (``kuota simulate``). Pure."""
        ...


@runtime_checkable
class StartTimeBlocksRestore(Protocol):
    """The API server lets a stopped job's pod template change only once its start time is gone.

    A batch/v1 Job that ran has ``status.startTime``; its pod template may be
    restored only after that is cleared (through ``jobs/status``).  Other
    kinds keep their start time and are restored as they are.
    """

    def start_time_blocks_restore(self, job: RawObject) -> bool:
        """Whether ``job``'s start time must be cleared before its template is restored."""
        ...


@runtime_checkable
class ReplicaGroups(Protocol):
    """The kind runs replicas that are each a group of pods, one Workload per replica.

    Kueue's LeaderWorkerSet: nothing of the object is suspended; the
    scheduler makes one Workload per replica from the object's spec (owned
    by it), and puts each pod the kind's controller makes into the pod group
    of its replica, naming that Workload; the pod groups
    (:class:`PodGroups`) then admit, start and stop the pods.  The webhook
    marks the kind's pod templates (:class:`QueuedThroughPods`) so that its
    pods are gated at creation and wait for this.
    """

    unplaced_pod_selector: str
    """Label selector of the kind's queued pods not in a group yet (the scheduler watches them)."""
    unqueued_pod_selector: str | None
    """With ``manageJobsWithoutQueueName``, the selector of its pods to watch instead: its
    objects that name no queue are queued all the same (Kueue's StatefulSet), so are their
    pods; None: only objects that name a queue are (see :meth:`queued`)."""

    def queued(self, obj: RawObject, *, without_queue_name: bool) -> bool:
        """Whether kuota queues the object: it names a queue or, with ``without_queue_name``
        (``manageJobsWithoutQueueName``) and a kind that allows it, its pod template was
        marked by the webhook all the same."""
        ...

    def owner_of_pod(self, pod: RawObject) -> str | None:
        """The name of the object (in the pod's namespace) the pod belongs to, if any."""
        ...

    def replica_workloads(
        self, obj: RawObject, *, priority_classes: PriorityClasses | None = None
    ) -> dict[str, dict[str, Any]]:
        """Workload name -> the Workload the object should have now, one per replica."""
        ...

    def place_pod(self, obj: RawObject, pod: RawObject) -> dict[str, Any] | None:
        """A copy of ``pod`` put into its replica's group, None when it cannot be (yet)."""
        ...


@runtime_checkable
class HoldAtZero(Protocol):
    """A kind with replica groups whose Workload outlives a scale to zero (Kueue's StatefulSet).

    Its Workloads are never deleted for want of replicas: scaled to zero, an
    admitted one gives its quota back and is put on hold (``QuotaReserved=False``,
    reason ``OnHold``, not queued); scaled up again, the hold comes off.
    """

    hold_message: str
    """The ``OnHold`` condition's message."""

    def should_hold(self, obj: RawObject, workload: RawObject) -> bool:
        """The object's quota should go back and its Workload wait on hold."""
        ...

    def should_release_hold(self, obj: RawObject, workload: RawObject) -> bool:
        """The Workload's hold should come off: it queues again."""
        ...


@runtime_checkable
class MultiKueueAdapter(Protocol):
    """The kind can run on a worker cluster: MultiKueue copies it there once admitted.

    The manager's object stays suspended; the worker's copy runs (its own
    kuota finds the admitted Workload copy by ``prebuilt-workload-name``), and
    the copy's status is written back to the manager's object.
    """

    managed_by_at: tuple[str, ...]
    """Where the kind keeps ``managedBy`` (``("spec", "managedBy")``): the manager's webhook
    sets it so the manager's framework controller leaves the object to MultiKueue."""

    def remote_copy(self, job: RawObject, workload_name: str, origin: str) -> dict[str, Any]:
        """The object as created on the worker that admitted its Workload."""
        ...

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """The manager object's ``status`` once its remote copy is gone, None when it already
        says nothing runs (the quota of an evicted job is released only when nothing runs)."""
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


def webhook_path(integration: Integration, verb: Literal["mutate", "validate"]) -> str:
    """Kueue's path of a kind's webhook: pure.

    ``/mutate-batch-v1-job``, ``/validate-jobset-x-k8s-io-v1alpha2-jobset``.
    """
    version = integration.api_version.rpartition("/")[2]
    return f"/{verb}-{integration.group.replace('.', '-')}-{version}-{integration.kind.lower()}"
