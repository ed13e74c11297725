"""An AppWrapper's components and their pod sets, as Kueue reads them (docs/concepts.md#appwrapper).

An AppWrapper (``workload.codeflare.dev/v1beta2``) wraps Kubernetes objects
(``spec.components[].template``); each component holds pod sets, each a
pod template found at a ``path`` in the wrapped object with a number of
``replicas`` (default 1).  Where they come from, as Kueue takes them:

- ``status.componentStatus[].podSets`` once the AppWrapper controller wrote
  one entry per component;
- else the component's declared ``podSets``;
- else inferred from the wrapped kind (:func:`infer`): a batch Job, a Pod,
  a Deployment, a StatefulSet, a JobSet, a PyTorchJob, a RayCluster or a
  RayJob; any other kind has none.

A pod set's ``annotations`` say how its pods are numbered, for
topology-aware scheduling (:data:`TAS_POD_INDEX_LABEL` and the sub-group
pair); the inferred ones carry them as the AppWrapper controller writes them
(a Job's completion index; a JobSet's, with its job index and replicas; a
PyTorchJob's replica index).  With the template's own TAS annotations they
make the pod set's ``topologyRequest``, as for every other kind.

A ``path`` starts with ``template`` (the wrapped object) followed by
``.field`` and ``[index]`` steps.  The pod sets of all components, in order,
are the Workload's, named ``<AppWrapper name>-<index>``.  Starting writes one
``podSetInfos`` entry per pod set in that same order (the AppWrapper
controller applies them to the templates when it creates the components);
the wrapped templates are never changed.  Everything here is pure.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler.jobs import pod_template, topology

_mapping = pod_template.mapping
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")

_TAS_PREFIX: Final = "workload.codeflare.dev.appwrapper"
TAS_POD_INDEX_LABEL: Final = f"{_TAS_PREFIX}/tas-pod-index-label"
"""A pod set annotation: the pod label holding each pod's index."""
TAS_SUB_GROUP_INDEX_LABEL: Final = f"{_TAS_PREFIX}/tas-sub-group-index-label"
"""A pod set annotation: the pod label holding each pod's sub-group (a JobSet's job index)."""
TAS_SUB_GROUP_COUNT: Final = f"{_TAS_PREFIX}/tas-sub-group-count"
"""A pod set annotation: how many sub-groups (an integer; the webhook refuses anything else)."""
PYTORCH_REPLICA_INDEX: Final = "training.kubeflow.org/replica-index"

Inferred = tuple[str, int, dict[str, str]]
"""(path, replicas, annotations) of one pod set."""


@dataclass(frozen=True, slots=True)
class ComponentPodSet:
    """One pod set of one component: where its template is and how many pods it has."""

    component: int
    path: str
    replicas: int
    annotations: Mapping[str, str] = field(default_factory=dict)


class PathError(ValueError):
    """A pod set ``path`` that does not lead to a value of the expected type."""


def value_at(obj: Mapping[str, Any], path: str) -> Any:
    """The value ``path`` (``template.spec.template``, ``template.a[0].b``) names: pure.

    Raises :class:`PathError` for a path that does not start with
    ``template`` or leads nowhere.
    """
    if not path.startswith("template"):
        raise PathError(f"{path!r}: the first element of a path must be 'template'")
    rest, cursor = path[len("template") :], obj
    position = 0
    while position < len(rest):
        step = _STEP.match(rest, position)
        if step is None:
            raise PathError(f"{path!r}: cannot read the path at {rest[position:]!r}")
        key, index = step.group(1), step.group(2)
        if key is not None:
            if not isinstance(cursor, Mapping) or key not in cursor:
                raise PathError(f"{path!r}: no field {key!r}")
            cursor = cursor[key]
        else:
            if not isinstance(cursor, list) or int(index) >= len(cursor):
                raise PathError(f"{path!r}: no element {index}")
            cursor = cursor[int(index)]
        position = step.end()
    return cursor


def _count(obj: Mapping[str, Any], path: str) -> int:
    """An integer at ``path``, 1 when absent (Kueue's ``inferReplicas``): pure."""
    try:
        value = value_at(obj, path)
    except PathError:
        return 1
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise PathError(f"{path!r}: not an integer")
    return value


def _has(obj: Mapping[str, Any], path: str) -> bool:
    try:
        value_at(obj, path)
    except PathError:
        return False
    return True


def _job_pods(obj: Mapping[str, Any], spec: str) -> int:
    """A Job's pods: its parallelism (default 1), its completions when fewer: pure."""
    count = 1
    parallelism = _optional_int(obj, f"{spec}.parallelism")
    if parallelism is not None:
        count = parallelism
    completions = _optional_int(obj, f"{spec}.completions")
    if completions is not None and completions < count:
        count = completions
    return count


def _optional_int(obj: Mapping[str, Any], path: str) -> int | None:
    try:
        value = value_at(obj, path)
    except PathError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ray(obj: Mapping[str, Any], prefix: str) -> list[Inferred]:
    found: list[Inferred] = [(f"{prefix}headGroupSpec.template", 1, {})]
    groups = _mapping(obj).get("spec")
    spec = _mapping(groups)
    if prefix.endswith("rayClusterSpec."):
        spec = _mapping(spec.get("rayClusterSpec"))
    for index, _ in enumerate(spec.get("workerGroupSpecs") or []):
        group = f"{prefix}workerGroupSpecs[{index}]"
        if _has(obj, f"{group}.template"):
            found.append((f"{group}.template", _count(obj, f"{group}.replicas"), {}))
    return found


def infer(obj: Mapping[str, Any]) -> list[Inferred]:
    """(path, replicas, annotations) of each pod set of a wrapped object of a known kind: pure.

    Raises :class:`PathError` when a count is not an integer.
    """
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = (group, str(obj.get("kind", "")))
    if kind == ("batch", "Job"):
        indexed = {TAS_POD_INDEX_LABEL: topology.JOB_COMPLETION_INDEX}
        return [("template.spec.template", _job_pods(obj, "template.spec"), indexed)]
    if kind == ("", "Pod"):
        return [("template", 1, {})]
    if kind in (("apps", "Deployment"), ("apps", "StatefulSet")):
        return [("template.spec.template", _count(obj, "template.spec.replicas"), {})]
    if kind == ("jobset.x-k8s.io", "JobSet"):
        found: list[Inferred] = []
        for index, _ in enumerate(_mapping(obj.get("spec")).get("replicatedJobs") or []):
            job = f"template.spec.replicatedJobs[{index}]"
            if _has(obj, f"{job}.template"):
                pods = _job_pods(obj, f"{job}.template.spec")
                replicas = _count(obj, f"{job}.replicas")
                numbering = {
                    TAS_POD_INDEX_LABEL: topology.JOB_COMPLETION_INDEX,
                    TAS_SUB_GROUP_INDEX_LABEL: topology.JOBSET_JOB_INDEX,
                    TAS_SUB_GROUP_COUNT: str(replicas),
                }
                found.append((f"{job}.template.spec.template", replicas * pods, numbering))
        return found
    if kind == ("kubeflow.org", "PyTorchJob"):
        return [
            (
                f"template.spec.pytorchReplicaSpecs.{role}.template",
                _count(obj, f"template.spec.pytorchReplicaSpecs.{role}.replicas"),
                {TAS_POD_INDEX_LABEL: PYTORCH_REPLICA_INDEX},
            )
            for role in ("Master", "Worker")
            if _has(obj, f"template.spec.pytorchReplicaSpecs.{role}")
        ]
    if kind == ("ray.io", "RayCluster"):
        return _ray(obj, "template.spec.")
    if kind == ("ray.io", "RayJob"):
        return _ray(obj, "template.spec.rayClusterSpec.")
    return []


def components(aw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = _mapping(aw.get("spec")).get("components")
    return [item for item in items or [] if isinstance(item, Mapping)]


def declared_pod_sets(component: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A component's (or a component status's) ``podSets`` entries that are objects: pure."""
    return [item for item in component.get("podSets") or [] if isinstance(item, Mapping)]


def _declared(component: Mapping[str, Any]) -> list[Inferred]:
    found: list[Inferred] = []
    for pod_set in declared_pod_sets(component):
        replicas = pod_set.get("replicas")
        count = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
        annotations = _mapping(pod_set.get("annotations"))
        strings = {str(key): value for key, value in annotations.items() if isinstance(value, str)}
        found.append((str(pod_set.get("path", "")), count, strings))
    return found


def integer(text: object) -> int | None:
    """``text`` read as Go's ``strconv.Atoi`` reads it, None when it is not an integer: pure."""
    return int(text) if isinstance(text, str) and _INTEGER.fullmatch(text) else None


def sub_group_count(annotations: Mapping[str, str]) -> int | None:
    """The :data:`TAS_SUB_GROUP_COUNT` annotation's integer, None when absent or not one: pure."""
    return integer(annotations.get(TAS_SUB_GROUP_COUNT))


def component_pod_sets(aw: Mapping[str, Any]) -> list[ComponentPodSet]:
    """Every pod set of every component, in order (module docstring): pure.

    Raises :class:`PathError` when a wrapped kind's counts cannot be read.
    """
    parts = components(aw)
    recorded = _mapping(aw.get("status")).get("componentStatus")
    if isinstance(recorded, list) and len(recorded) == len(parts):
        listed = [_declared(_mapping(status)) for status in recorded]
    else:
        listed = [
            _declared(component) or infer(_mapping(component.get("template")))
            for component in parts
        ]
    return [
        ComponentPodSet(index, path, replicas, annotations)
        for index, pod_sets in enumerate(listed)
        for path, replicas, annotations in pod_sets
    ]


def pod_sets(aw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Workload's pod sets: ``<name>-<index>``, their replicas and templates: pure.

    A pod set whose path leads to no pod template is left out, as Kueue does.
    """
    return [found for _, found in _numbered(aw) if found is not None]


def pod_set_names(aw: Mapping[str, Any]) -> list[str | None]:
    """The Workload pod set of each component pod set, in order (None: left out): pure."""
    return [found["name"] if found is not None else None for _, found in _numbered(aw)]


def _numbered(aw: Mapping[str, Any]) -> list[tuple[ComponentPodSet, dict[str, Any] | None]]:
    name = str(_mapping(aw.get("metadata")).get("name", ""))
    parts = components(aw)
    numbered: list[tuple[ComponentPodSet, dict[str, Any] | None]] = []
    count = 0
    for wanted in component_pod_sets(aw):
        template = _template_at(parts[wanted.component], wanted.path)
        if template is None:
            numbered.append((wanted, None))
            continue
        pod_set: dict[str, Any] = {
            "name": f"{name}-{count}",
            "count": wanted.replicas,
            "template": template,
        }
        request = topology.topology_request(
            template,
            pod_index_label=wanted.annotations.get(TAS_POD_INDEX_LABEL),
            sub_group_index_label=wanted.annotations.get(TAS_SUB_GROUP_INDEX_LABEL),
            sub_group_count=sub_group_count(wanted.annotations),
        )
        if request is not None:
            pod_set["topologyRequest"] = request
        numbered.append((wanted, pod_set))
        count += 1
    return numbered


def _template_at(component: Mapping[str, Any], path: str) -> dict[str, Any] | None:
    try:
        found = value_at(_mapping(component.get("template")), path)
    except PathError:
        return None
    if not isinstance(found, Mapping) or not isinstance(found.get("spec"), Mapping):
        return None
    template: dict[str, Any] = {"spec": copy.deepcopy(dict(found["spec"]))}
    metadata = _mapping(found.get("metadata"))
    kept = {key: dict(metadata[key]) for key in ("labels", "annotations") if metadata.get(key)}
    if kept:
        template["metadata"] = kept
    return template


def with_pod_set_infos(aw: Mapping[str, Any], infos: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A copy of ``aw`` whose components carry ``infos``: one per component pod set, in order
    (:func:`pod_set_names`): pure."""
    result = copy.deepcopy(dict(aw))
    parts = result.setdefault("spec", {}).setdefault("components", [])
    per_component: dict[int, list[Mapping[str, Any]]] = {}
    for wanted, info in zip(component_pod_sets(aw), infos, strict=True):
        per_component.setdefault(wanted.component, []).append(info)
    for index, component in enumerate(parts):
        if isinstance(component, dict):
            component["podSetInfos"] = [dict(info) for info in per_component.get(index, [])]
    return result


def without_pod_set_infos(aw: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``aw`` whose components carry no ``podSetInfos`` (Kueue's restore): pure."""
    result = copy.deepcopy(dict(aw))
    for component in _mapping(result.get("spec")).get("components") or []:
        if isinstance(component, dict):
            component.pop("podSetInfos", None)
    return result


__all__ = [
    "PYTORCH_REPLICA_INDEX",
    "TAS_POD_INDEX_LABEL",
    "TAS_SUB_GROUP_COUNT",
    "TAS_SUB_GROUP_INDEX_LABEL",
    "ComponentPodSet",
    "PathError",
    "component_pod_sets",
    "components",
    "declared_pod_sets",
    "integer",
    "infer",
    "pod_set_names",
    "pod_sets",
    "sub_group_count",
    "value_at",
    "with_pod_set_infos",
    "without_pod_set_infos",
]
