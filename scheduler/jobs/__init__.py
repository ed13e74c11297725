"""Job integrations (DESIGN.md layer 2): pure translations between batch job
kinds and the Workloads the scheduler queues.

``batch/job`` (batch/v1 Job), ``jobset.x-k8s.io/jobset`` (JobSet) and
``pod`` (plain Pods and pod groups) are registered on import, and
``deployment`` and ``statefulset`` are served through their pods; find an
integration with :func:`registry.for_object` or :func:`registry.by_framework`,
and make a job's Workload with :func:`workload_from_job`.  Whether a
namespace's Jobs are kuota's at all is :func:`is_managed_namespace` (one rule
for the webhook and the Job controller).
"""

from scheduler.api.refs import JOB_UID_LABEL
from scheduler.jobs.base import FinishedState, JobIntegration, PodSetInfo
from scheduler.jobs.batch import BATCH_JOB, BatchJob
from scheduler.jobs.deployment import DEPLOYMENT_FRAMEWORK
from scheduler.jobs.jobset import JOBSET, JOBSET_FRAMEWORK, JobSet
from scheduler.jobs.managed_namespaces import ManagedNamespaces, is_managed_namespace
from scheduler.jobs.pod import POD, POD_FRAMEWORK
from scheduler.jobs.registry import (
    by_framework,
    for_object,
    frameworks,
    not_integrated,
    register,
)
from scheduler.jobs.statefulset import STATEFULSET_FRAMEWORK
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    workload_from_job,
    workload_name,
)

__all__ = [
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
    "is_managed_namespace",
    "register",
    "workload_from_job",
    "workload_name",
]
