"""One set of fluent builders for the test suites: raw API objects as the API server
returns them, and (``models``) the engine's typed models made from them.

One module per family of kinds:

- ``kueue``: ResourceFlavor, ClusterQueue (``flavor_quotas``, ``resource_group``;
  ``legacy_resource`` for the v1alpha1/v1alpha2 ``spec.resources``), Cohort, LocalQueue,
  WorkloadPriorityClass, AdmissionCheck, MultiKueueConfig, MultiKueueCluster, Topology;
- ``workload``: Workload (``pod_set``, ``assignment``);
- ``core``: Namespace, PriorityClass, Pod (``pod_group``), Secret, LimitRange, RuntimeClass;
- ``jobs``: batch Job, JobSet, Deployment, StatefulSet;
- ``config``: Configuration;
- ``pods``: containers and pod templates, shared by the kinds above;
- ``base``: the envelope every builder shares, ``T0``/``at``/``stamp``, ``condition``.

Extend a builder rather than copying a dict into a test.
"""

from tests.builders.base import T0, Built, ObjectBuilder, at, condition, raw, stamp
from tests.builders.config import configuration
from tests.builders.core import (
    limit_range,
    namespace,
    pod,
    pod_group,
    priority_class,
    runtime_class,
    secret,
)
from tests.builders.jobs import (
    deployment,
    job,
    jobset,
    kubeflow_job,
    leader_worker_set,
    ray_cluster,
    ray_job,
    ray_service,
    stateful_set,
)
from tests.builders.kueue import (
    KUEUE,
    admission_check,
    cluster_queue,
    cohort,
    flavor_quotas,
    legacy_resource,
    local_queue,
    multikueue_cluster,
    multikueue_config,
    resource_flavor,
    resource_group,
    topology,
    workload_priority_class,
)
from tests.builders.models import engine_with, model
from tests.builders.pods import container, required_affinity, toleration
from tests.builders.workload import assignment, pod_set, workload

__all__ = [
    "KUEUE",
    "T0",
    "Built",
    "ObjectBuilder",
    "admission_check",
    "assignment",
    "at",
    "cluster_queue",
    "cohort",
    "condition",
    "configuration",
    "container",
    "deployment",
    "engine_with",
    "flavor_quotas",
    "job",
    "jobset",
    "kubeflow_job",
    "leader_worker_set",
    "legacy_resource",
    "limit_range",
    "local_queue",
    "model",
    "multikueue_cluster",
    "multikueue_config",
    "namespace",
    "pod",
    "pod_group",
    "pod_set",
    "priority_class",
    "raw",
    "ray_cluster",
    "ray_job",
    "ray_service",
    "required_affinity",
    "resource_flavor",
    "resource_group",
    "runtime_class",
    "secret",
    "stamp",
    "stateful_set",
    "toleration",
    "topology",
    "workload",
    "workload_priority_class",
]
