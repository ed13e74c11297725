"""Job integrations (docs/architecture.md, layer 2): pure translations between the kinds
kuota queues and their Workloads.

One folder per kind over one protocol with declared capabilities
(:mod:`.protocol`): ``batchjob/`` (batch/v1 Job), ``jobset/``, ``pod/``
(plain Pods and pod groups), ``deployment/`` and ``statefulset/`` (queued
through their pods), each registered by one line of :mod:`.kinds`.
Everything else here is generic: the registry, the Job controller's
decision, pod templates, the Workload of a job, equivalence, managed
namespaces, the rules all kinds share (:mod:`.job_rules`).  Find a kind with
:func:`registry.for_object` or :func:`registry.by_framework`, ask it for a
capability with :func:`registry.capability`, and make a job's Workload with
:func:`workload_from_job`.  Whether a namespace's jobs are kuota's at all
is :func:`is_managed_namespace` (one rule for the webhook and the
controller).
"""

from scheduler.api.refs import JOB_UID_LABEL
from scheduler.jobs import kinds as _kinds  # noqa: F401 - fills the registry
from scheduler.jobs.batchjob import BATCH_JOB, BatchJob
from scheduler.jobs.jobset import JOBSET, JOBSET_FRAMEWORK, JobSet
from scheduler.jobs.managed_namespaces import ManagedNamespaces, is_managed_namespace
from scheduler.jobs.pod import POD, POD_FRAMEWORK
from scheduler.jobs.protocol import (
    AdmissionFacts,
    AdmissionRules,
    ApiAccess,
    FinishedState,
    GateOnCreate,
    GroupPodsReadiness,
    HoldAtZero,
    Integration,
    JobIntegration,
    JobPriorityClass,
    MultiKueueAdapter,
    OwnController,
    PodGroups,
    PodSetInfo,
    PodsReadiness,
    QueuedThroughPods,
    ReclaimableCount,
    ReclaimablePods,
    Reference,
    ReferencedKind,
    ReplicaGroups,
    ResolvedThroughReference,
    ScaledThroughChild,
    StartTimeBlocksRestore,
    SuspendOnCreate,
    webhook_path,
)
from scheduler.jobs.registry import (
    by_framework,
    capability,
    for_object,
    frameworks,
    integration_for,
    integrations,
    job_integration,
    job_integrations,
    kinds_with,
    not_integrated,
    register,
)
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    workload_from_job,
    workload_name,
)

__all__ = [
    "AdmissionFacts",
    "AdmissionRules",
    "ApiAccess",
    "BATCH_JOB",
    "BatchJob",
    "FinishedState",
    "GateOnCreate",
    "GroupPodsReadiness",
    "HoldAtZero",
    "Integration",
    "JOBSET",
    "JOBSET_FRAMEWORK",
    "JOB_UID_LABEL",
    "JobIntegration",
    "JobPriorityClass",
    "JobSet",
    "MultiKueueAdapter",
    "ManagedNamespaces",
    "OwnController",
    "POD",
    "POD_FRAMEWORK",
    "PodGroups",
    "PodSetInfo",
    "PodsReadiness",
    "PriorityClasses",
    "QueuedThroughPods",
    "ReclaimableCount",
    "ReclaimablePods",
    "Reference",
    "ReferencedKind",
    "ReplicaGroups",
    "ResolvedThroughReference",
    "ScaledThroughChild",
    "StartTimeBlocksRestore",
    "SuspendOnCreate",
    "by_framework",
    "capability",
    "for_object",
    "frameworks",
    "integration_for",
    "integrations",
    "is_managed_namespace",
    "job_integration",
    "job_integrations",
    "not_integrated",
    "register",
    "webhook_path",
    "kinds_with",
    "workload_from_job",
    "workload_name",
]
