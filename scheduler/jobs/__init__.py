"""Job integrations (DESIGN.md layer 2): pure translations between batch job
kinds and the Workloads the scheduler queues.

One package per integration over one protocol (:mod:`.base`):
``batchjob/`` (``batch/job``, batch/v1 Job) and ``jobset/``
(``jobset.x-k8s.io/jobset``, JobSet), each with its protocol implementation
and its admission rules, registered on import; ``pod/`` (``pod``, plain Pods
and pod groups) is registered too but keeps its own webhook and controller
decisions (a Pod cannot be suspended), and ``deployment/`` and
``statefulset/`` are served through their pods.  Everything else here is
generic: the registry, the Job controller, pod templates, the Workload of a
job, equivalence, managed namespaces, the rules all kinds share
(:mod:`.job_rules`).  Find an integration with :func:`registry.for_object`
or :func:`registry.by_framework` (every one: :func:`registry.integrations`),
and make a job's Workload with :func:`workload_from_job`.  Whether a
namespace's jobs are kuota's at all is :func:`is_managed_namespace` (one
rule for the webhook and the Job controller).
"""

from scheduler.api.refs import JOB_UID_LABEL
from scheduler.jobs.base import (
    AdmissionFacts,
    FinishedState,
    JobIntegration,
    PodSetInfo,
    webhook_path,
)
from scheduler.jobs.batchjob import BATCH_JOB, BatchJob
from scheduler.jobs.deployment import DEPLOYMENT_FRAMEWORK
from scheduler.jobs.jobset import JOBSET, JOBSET_FRAMEWORK, JobSet
from scheduler.jobs.managed_namespaces import ManagedNamespaces, is_managed_namespace
from scheduler.jobs.pod import POD, POD_FRAMEWORK
from scheduler.jobs.registry import (
    by_framework,
    for_object,
    frameworks,
    has_own_decisions,
    integrations,
    not_integrated,
    register,
    suspendable,
)
from scheduler.jobs.statefulset import STATEFULSET_FRAMEWORK
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    workload_from_job,
    workload_name,
)

__all__ = [
    "AdmissionFacts",
    "BATCH_JOB",
    "BatchJob",
    "DEPLOYMENT_FRAMEWORK",
    "POD",
    "POD_FRAMEWORK",
    "STATEFULSET_FRAMEWORK",
    "FinishedState",
    "JOBSET",
    "JOBSET_FRAMEWORK",
    "JOB_UID_LABEL",
    "not_integrated",
    "JobSet",
    "JobIntegration",
    "ManagedNamespaces",
    "PodSetInfo",
    "PriorityClasses",
    "by_framework",
    "for_object",
    "frameworks",
    "has_own_decisions",
    "integrations",
    "is_managed_namespace",
    "register",
    "suspendable",
    "webhook_path",
    "workload_from_job",
    "workload_name",
]
