"""The ``kubeflow.org/mpijob`` integration: the MPI operator's MPIJobs (``kubeflow.org/v2beta1``).

A :class:`~scheduler.jobs.kubeflowjob.ReplicaSpecJob`: pod sets ``launcher``
then ``worker`` from ``spec.mpiReplicaSpecs``, suspended through
``spec.runPolicy.suspend`` (docs/concepts.md#kubeflow-jobs).  The MPI
operator runs the launcher as a batch Job owned by the MPIJob; it is left to
the MPIJob, which is queued instead.
"""

from typing import Final

from scheduler.jobs.kubeflowjob import ReplicaSpecJob
from scheduler.jobs.protocol import ApiAccess

MPIJOB_FRAMEWORK: Final = "kubeflow.org/mpijob"

MPIJOB: Final = ReplicaSpecJob(
    framework=MPIJOB_FRAMEWORK,
    api_version="kubeflow.org/v2beta1",
    kind="MPIJob",
    resource="mpijobs",
    specs_field="mpiReplicaSpecs",
    replica_types=("Launcher", "Worker"),
    access=ApiAccess(
        scheduler={"mpijobs": ("list", "watch", "patch")},
        # The owner chain of a created object: the launcher Job is the MPIJob's.
        webhook={"mpijobs": ("get",)},
        multikueue={"mpijobs": ("get",), "mpijobs/status": ("patch",)},
    ),
)

__all__ = ["MPIJOB", "MPIJOB_FRAMEWORK"]
