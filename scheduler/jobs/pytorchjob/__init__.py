"""The ``kubeflow.org/pytorchjob`` integration: Trainer v1's PyTorchJobs (``kubeflow.org/v1``).

A :class:`~scheduler.jobs.kubeflowjob.ReplicaSpecJob`: pod sets ``master``
then ``worker`` from ``spec.pytorchReplicaSpecs``, suspended through
``spec.runPolicy.suspend`` (docs/concepts.md#kubeflow-jobs).
"""

from typing import Final

from scheduler.jobs.kubeflowjob import ReplicaSpecJob
from scheduler.jobs.protocol import ApiAccess

PYTORCHJOB_FRAMEWORK: Final = "kubeflow.org/pytorchjob"

PYTORCHJOB: Final = ReplicaSpecJob(
    framework=PYTORCHJOB_FRAMEWORK,
    api_version="kubeflow.org/v1",
    kind="PyTorchJob",
    resource="pytorchjobs",
    specs_field="pytorchReplicaSpecs",
    replica_types=("Master", "Worker"),
    access=ApiAccess(
        scheduler={"pytorchjobs": ("list", "watch", "patch")},
        multikueue={"pytorchjobs": ("get",), "pytorchjobs/status": ("patch",)},
    ),
)

__all__ = ["PYTORCHJOB", "PYTORCHJOB_FRAMEWORK"]
