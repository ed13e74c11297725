"""The ``batch/job`` integration: Kubernetes ``batch/v1`` Jobs.

:mod:`.integration` is the protocol (queue name, pod sets, suspend, run with
the admitted flavors, restore, finished); :mod:`.validation` the admission
rules of docs/validation.md#jobs.  Importing the package registers
:data:`BATCH_JOB`.
"""

from scheduler.jobs.batchjob.integration import BATCH_JOB, BatchJob
from scheduler.jobs.batchjob.validation import validate_job

__all__ = ["BATCH_JOB", "BatchJob", "validate_job"]
