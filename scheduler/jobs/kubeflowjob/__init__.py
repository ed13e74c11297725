"""What Kubeflow's training kinds share (:mod:`.replica_specs`): not a kind of its own.

The MPIJob (``scheduler/jobs/mpijob/``) and the Trainer v1 jobs
(``pytorchjob/``, ``jaxjob/``) are each a :class:`ReplicaSpecJob` with their
names and replica types.
"""

from scheduler.jobs.kubeflowjob.replica_specs import ReplicaSpecJob, is_suspended

__all__ = ["ReplicaSpecJob", "is_suspended"]
