"""The ``jobset.x-k8s.io/jobset`` integration: JobSets (``jobset.x-k8s.io/v1alpha2``).

:mod:`.integration` is the protocol (a pod set per replicated job, suspend,
run with the admitted flavors, restore, finished); :mod:`.validation` the
admission rules of docs/validation.md#jobs.  Importing the package
registers :data:`JOBSET`.
"""

from scheduler.jobs.jobset.integration import (
    JOBSET,
    JOBSET_FRAMEWORK,
    JobSet,
    active_jobs,
)
from scheduler.jobs.jobset.shape import replicated_jobs
from scheduler.jobs.jobset.validation import validate_jobset

__all__ = [
    "JOBSET",
    "JOBSET_FRAMEWORK",
    "JobSet",
    "active_jobs",
    "replicated_jobs",
    "validate_jobset",
]
