"""The ``kubeflow.org/jaxjob`` integration: Kubeflow Trainer v1's JAXJobs (``kubeflow.org/v1``).

A :class:`~scheduler.jobs.kubeflowjob.ReplicaSpecJob`: one pod set ``worker``
from ``spec.jaxReplicaSpecs``, suspended through ``spec.runPolicy.suspend``
(docs/concepts.md#kubeflow-jobs).
"""

from typing import Final

from scheduler.jobs.kubeflowjob import ReplicaSpecJob
from scheduler.jobs.protocol import ApiAccess

JAXJOB_FRAMEWORK: Final = "kubeflow.org/jaxjob"

JAXJOB: Final = ReplicaSpecJob(
    framework=JAXJOB_FRAMEWORK,
    api_version="kubeflow.org/v1",
    kind="JAXJob",
    resource="jaxjobs",
    specs_field="jaxReplicaSpecs",
    replica_types=("Worker",),
    access=ApiAccess(
        scheduler={"jaxjobs": ("list", "watch", "patch")},
        multikueue={"jaxjobs": ("get",), "jaxjobs/status": ("patch",)},
    ),
)

__all__ = ["JAXJOB", "JAXJOB_FRAMEWORK"]
