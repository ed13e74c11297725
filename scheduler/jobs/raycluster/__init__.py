"""The ``ray.io/raycluster`` integration: KubeRay's RayClusters.

:mod:`.cluster_spec` is what every Ray kind shares (the pod sets of a
cluster spec, starting and restoring its templates, its rules);
:mod:`.integration` the RayCluster protocol; :mod:`.validation` the rules of
docs/validation.md#jobs for the Ray kinds.
"""

from scheduler.jobs.raycluster.integration import RAYCLUSTER, RAYCLUSTER_FRAMEWORK, RayCluster

__all__ = ["RAYCLUSTER", "RAYCLUSTER_FRAMEWORK", "RayCluster"]
