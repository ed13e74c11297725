"""A Ray cluster's spec as Kueue queues it: what RayClusters, RayJobs and RayServices share.

A ``rayClusterSpec`` (KubeRay's ``ray.io/v1``) is a head group and worker
groups; each is one pod set (docs/concepts.md#ray):

- ``head``: 1 pod, the head group's template.  With GCS fault tolerance
  (annotation ``ray.io/ft-enabled: "true"`` or ``gcsFaultToleranceOptions``)
  the first container asks for at least 200m CPU and 256Mi, the requests of
  the Redis cleanup Job KubeRay runs when the cluster goes; with in-tree
  autoscaling, KubeRay's autoscaler sidecar (its ``autoscalerOptions``
  resources, else 500m CPU and 512Mi) is counted too;
- one per worker group, named after it: ``replicas`` (default 1) times
  ``numOfHosts`` when above 1.  Autoscaling bounds (``minReplicas``,
  ``maxReplicas``) do not count, as in Kueue: only an elastic object
  autoscales, and each change of its ``replicas`` (a RayJob's or RayService's:
  those of the cluster KubeRay made for it, :func:`with_replicas_of`) is a
  scale-down in place or a new workload slice (docs/concepts.md#elastic-jobs);
  the rules refuse autoscaling anywhere else.

Starting steers each group's pod template to its pod set's flavor; restoring
puts the templates recorded in the Workload back.  The rules every queued
Ray kind shares on its cluster spec are :func:`check_cluster_spec`.
Everything here is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.quantity import Quantity
from scheduler.jobs import pod_template
from scheduler.jobs.protocol import PodSetInfo

HEAD: Final = "head"
MAX_POD_SETS: Final = 18
"""The most pod sets a Workload may have."""
FT_ANNOTATION: Final = "ray.io/ft-enabled"
REDIS_CLEANUP_REQUESTS: Final = {"cpu": "200m", "memory": "256Mi"}
AUTOSCALING_REFUSED: Final = (
    "a queued Ray cluster may autoscale only as an elastic job (annotated "
    'kueue.x-k8s.io/elastic-job: "true", with the ElasticJobsViaWorkloadSlices gate on); '
    "otherwise its quota is reserved for the pods it asks for"
)
AUTOSCALER_RESOURCES: Final = {
    "requests": {"cpu": "500m", "memory": "512Mi"},
    "limits": {"cpu": "500m", "memory": "512Mi"},
}

_mapping = pod_template.mapping


def worker_groups(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    groups = spec.get("workerGroupSpecs")
    return [g for g in groups if isinstance(g, Mapping)] if isinstance(groups, list) else []


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def worker_count(group: Mapping[str, Any]) -> int:
    """``replicas`` (default 1) times ``numOfHosts`` when above 1: pure."""
    count = _int(group.get("replicas"), 1)
    hosts = _int(group.get("numOfHosts"), 1)
    return count * hosts if hosts > 1 else count


def autoscales(spec: Mapping[str, Any]) -> bool:
    """``enableInTreeAutoscaling: true``: KubeRay's autoscaler sets the worker ``replicas``."""
    return spec.get("enableInTreeAutoscaling") is True


def with_replicas_of(spec: Mapping[str, Any], scaled: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of cluster ``spec`` whose worker groups have the ``replicas`` of the groups of
    the same name in ``scaled`` (the spec of the RayCluster the autoscaler scales); a group
    ``scaled`` has no count for keeps its own.  Pure."""
    result = copy.deepcopy(dict(spec))
    counts = {
        group.get("groupName"): group["replicas"]
        for group in worker_groups(scaled)
        if isinstance(group.get("replicas"), int) and not isinstance(group.get("replicas"), bool)
    }
    for group in result.get("workerGroupSpecs") or []:
        if isinstance(group, dict) and group.get("groupName") in counts:
            group["replicas"] = counts[group["groupName"]]
    return result


def ft_enabled(spec: Mapping[str, Any], annotations: Mapping[str, str]) -> bool:
    """KubeRay's GCS fault tolerance: the annotation (any case of ``true``) or its options."""
    value = annotations.get(FT_ANNOTATION)
    return (isinstance(value, str) and value.lower() == "true") or (
        spec.get("gcsFaultToleranceOptions") is not None
    )


def _at_least(requests: dict[str, Any], floor: Mapping[str, str]) -> None:
    """Raise each of ``floor``'s requests in ``requests`` to at least its value (in place)."""
    for name, minimum in floor.items():
        current = requests.get(name)
        try:
            if current is None or Quantity.parse(str(current)) < Quantity.parse(minimum):
                requests[name] = minimum
        except ValueError:
            requests[name] = minimum


def head_pod_set(spec: Mapping[str, Any], annotations: Mapping[str, str]) -> dict[str, Any]:
    template = copy.deepcopy(dict(_mapping(_mapping(spec.get("headGroupSpec")).get("template"))))
    pod_spec = template.setdefault("spec", {})
    containers = pod_spec.setdefault("containers", [])
    if ft_enabled(spec, annotations) and containers and isinstance(containers[0], dict):
        resources = containers[0].setdefault("resources", {})
        _at_least(resources.setdefault("requests", {}), REDIS_CLEANUP_REQUESTS)
    if spec.get("enableInTreeAutoscaling") is True:
        options = _mapping(spec.get("autoscalerOptions"))
        resources = options.get("resources")
        containers.append(
            {
                "name": "autoscaler",
                "resources": copy.deepcopy(
                    dict(resources) if isinstance(resources, Mapping) else AUTOSCALER_RESOURCES
                ),
            }
        )
    return {"name": HEAD, "count": 1, "template": template}


def pod_sets(spec: Mapping[str, Any], annotations: Mapping[str, str]) -> list[dict[str, Any]]:
    """The head's pod set, then one per worker group: pure."""
    return [head_pod_set(spec, annotations)] + [
        {
            "name": str(group.get("groupName", "")),
            "count": worker_count(group),
            "template": copy.deepcopy(dict(_mapping(group.get("template")))),
        }
        for group in worker_groups(spec)
    ]


def _templates(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(pod set name, pod template) of each group of a copied spec (created if absent)."""
    head = spec.setdefault("headGroupSpec", {}).setdefault("template", {})
    found = [(HEAD, head)]
    for group in spec.get("workerGroupSpecs") or []:
        if isinstance(group, dict):
            found.append((str(group.get("groupName", "")), group.setdefault("template", {})))
    return found


def run_with(spec: dict[str, Any], infos: Sequence[PodSetInfo]) -> None:
    """Steer each group's template of a copied spec to its pod set's flavor (in place)."""
    by_name = {info.name: info for info in infos}
    for name, template in _templates(spec):
        info = by_name.get(name)
        if info is not None:
            pod_template.steer(template, info)


def restore(spec: dict[str, Any], recorded: Sequence[Mapping[str, Any]]) -> None:
    """Put each group's recorded template back into a copied spec (in place)."""
    by_name = {str(p.get("name")): p for p in recorded}
    for name, template in _templates(spec):
        pod_set = by_name.get(name)
        if pod_set is None:
            continue
        pod_template.restore(template, _mapping(pod_set.get("template")))
        if not template["metadata"]:
            del template["metadata"]


def check_cluster_spec(
    spec: Mapping[str, Any],
    at: FieldPath,
    errors: list[FieldError],
    *,
    extra_pod_sets: int = 0,
    elastic: bool = False,
) -> None:
    """RAY-1 … RAY-3: what a queued Ray cluster may not have.

    ``extra_pod_sets``: pod sets the kind adds to the cluster's (a RayJob's
    submitter); ``elastic``: the object is an elastic job, which may
    autoscale.
    """
    if spec.get("enableInTreeAutoscaling") is True and not elastic:
        errors.append(
            error(
                at.child("enableInTreeAutoscaling"),
                AUTOSCALING_REFUSED,
                rule="RAY-1",
            )
        )
    groups = worker_groups(spec)
    total = 1 + len(groups) + extra_pod_sets
    if total > MAX_POD_SETS:
        errors.append(
            error(
                at.child("workerGroupSpecs"),
                f"too many groups: the Workload would have {total} pod sets (the head, "
                f"{len(groups)} worker groups"
                + (f", {extra_pod_sets} more" if extra_pod_sets else "")
                + f"), at most {MAX_POD_SETS}",
                rule="RAY-2",
            )
        )
    for index, group in enumerate(groups):
        if group.get("groupName") == HEAD:
            errors.append(
                error(
                    at.child("workerGroupSpecs").index(index).child("groupName"),
                    f'"{HEAD}" is reserved for the head group',
                    rule="RAY-3",
                )
            )
