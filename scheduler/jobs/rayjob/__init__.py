"""The ``ray.io/rayjob`` integration: KubeRay's RayJobs (:mod:`.integration`)."""

from scheduler.jobs.rayjob.integration import RAYJOB, RAYJOB_FRAMEWORK, RayJob

__all__ = ["RAYJOB", "RAYJOB_FRAMEWORK", "RayJob"]
