"""The ``ray.io/rayservice`` integration: KubeRay's RayServices (:mod:`.integration`)."""

from scheduler.jobs.rayservice.integration import RAYSERVICE, RAYSERVICE_FRAMEWORK, RayService

__all__ = ["RAYSERVICE", "RAYSERVICE_FRAMEWORK", "RayService"]
