"""The ``trainer.kubeflow.org/trainjob`` integration: Kubeflow Trainer v2's TrainJobs.

:mod:`.child_jobset` derives the JobSet Trainer makes from a TrainJob and
its runtime (with :mod:`.patches`, the strategic merge of runtime patches);
:mod:`.integration` is the protocol; :mod:`.validation` the admission rules
(docs/validation.md#jobs).  Importing the package registers nothing:
:mod:`scheduler.jobs.kinds` does.
"""

from scheduler.jobs.trainjob.child_jobset import replicated_jobs, runtime_ref
from scheduler.jobs.trainjob.integration import (
    KUEUE_PATCH_MANAGER,
    TRAINJOB,
    TRAINJOB_FRAMEWORK,
    TrainJob,
)
from scheduler.jobs.trainjob.validation import validate_trainjob

__all__ = [
    "KUEUE_PATCH_MANAGER",
    "TRAINJOB",
    "TRAINJOB_FRAMEWORK",
    "TrainJob",
    "replicated_jobs",
    "runtime_ref",
    "validate_trainjob",
]
