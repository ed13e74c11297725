"""Defaulting of kuota's API objects (validation.md section 1).

Two layers, as in Kueue:

* ``apply_schema_defaults`` (1.1) fills absent fields the way the CRD schema
  of Kueue would (``queueingStrategy: BestEffortFIFO``, pod set ``name:
  main``, ...).  It runs on create and on update, in the webhook and in the
  offline loader, so every code path sees the same object.  An explicitly
  empty string in a defaulted enum field counts as absent (api.md 0.6, kuota
  decision).
* ``apply_create_defaults`` (1.2) is what Kueue's mutating webhooks add on
  CREATE only: the ``resource-in-use`` finalizer, and dropping ``minCount``
  when partial admission is disabled.

Both are pure: they return a new plain-dict copy and never raise, whatever
the input looks like; a field of the wrong type is left alone for validation
to report.  Job/JobSet mutation (1.3) lives with the webhook, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.refs import LEGACY_API_VERSIONS as LEGACY_VERSIONS
from scheduler.api.refs import RESOURCE_IN_USE_FINALIZER as RESOURCE_IN_USE_FINALIZER

DEFAULT_POD_SET_NAME: Final = "main"


def plain_copy(value: object) -> Any:
    """A deep copy made of dicts and lists only (any Mapping/tuple converted): pure."""
    if isinstance(value, Mapping):
        return {key: plain_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_copy(item) for item in value]
    return value


def _default(container: object, field: str, value: object) -> None:
    """Set ``container[field]`` when absent, null or an empty string (in place)."""
    if isinstance(container, dict) and container.get(field) in (None, ""):
        container[field] = value


def _child(container: object, field: str, *, create: bool) -> Any:
    """``container[field]``, created as ``{}`` first when ``create`` and absent."""
    if not isinstance(container, dict):
        return None
    if create and container.get(field) is None:
        container[field] = {}
    return container.get(field)


def _items(container: object, field: str) -> list[Any]:
    value = container.get(field) if isinstance(container, dict) else None
    return value if isinstance(value, list) else []


def _default_weight(spec: object) -> None:
    fair_sharing = _child(spec, "fairSharing", create=False)
    if isinstance(fair_sharing, dict) and fair_sharing.get("weight") is None:
        fair_sharing["weight"] = 1


def _cluster_queue(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec", create=True)
    if not isinstance(spec, dict):
        return
    _default(spec, "queueingStrategy", "BestEffortFIFO")
    _default(spec, "stopPolicy", "None")
    fungibility = _child(spec, "flavorFungibility", create=True)
    _default(fungibility, "whenCanBorrow", "MayStopSearch")
    _default(fungibility, "whenCanPreempt", "TryNextFlavor")
    preemption = _child(spec, "preemption", create=True)
    _default(preemption, "withinClusterQueue", "Never")
    _default(preemption, "reclaimWithinCohort", "Never")
    _default(_child(preemption, "borrowWithinCohort", create=True), "policy", "Never")
    _default_weight(spec)


def _legacy_cluster_queue(obj: dict[str, Any]) -> None:
    for resource in _items(obj.get("spec"), "resources"):
        for flavor in _items(resource, "flavors"):
            _default(flavor, "name", "default")
            quota = flavor.get("quota") if isinstance(flavor, dict) else None
            if isinstance(quota, dict) and quota.get("min") is None:
                quota["min"] = 0


def _local_queue(obj: dict[str, Any]) -> None:
    spec = _child(obj, "spec", create=True)
    _default(spec, "stopPolicy", "None")
    _default_weight(spec)


def _cohort(obj: dict[str, Any]) -> None:
    _default_weight(obj.get("spec"))


def _workload(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("active") is None:
        spec["active"] = True
    for pod_set in _items(spec, "podSets"):
        _default(pod_set, "name", DEFAULT_POD_SET_NAME)
        if isinstance(pod_set, dict) and pod_set.get("count") is None:
            pod_set["count"] = 1
    admission = _child(obj.get("status"), "admission", create=False)
    for assignment in _items(admission, "podSetAssignments"):
        _default(assignment, "name", DEFAULT_POD_SET_NAME)


def _multikueue_cluster(obj: dict[str, Any]) -> None:
    source = _child(obj.get("spec"), "clusterSource", create=False)
    _default(_child(source, "kubeConfig", create=False), "locationType", "Secret")


_SCHEMA_DEFAULTS = {
    "ClusterQueue": _cluster_queue,
    "LocalQueue": _local_queue,
    "Cohort": _cohort,
    "Workload": _workload,
    "MultiKueueCluster": _multikueue_cluster,
}


def apply_schema_defaults(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Section 1.1 defaults on a copy of ``obj`` (create and update): pure.

    Kinds without schema defaults, and non-kueue objects, come back as an
    unchanged copy.  Legacy ``v1alpha1``/``v1alpha2`` ClusterQueues get the
    legacy defaults (flavor name ``default``, ``quota.min: 0``).
    """
    copy = plain_copy(obj)
    if not isinstance(copy, dict):
        return copy  # type: ignore[no-any-return]
    kind, api_version = copy.get("kind"), copy.get("apiVersion")
    if api_version in LEGACY_VERSIONS:
        if kind == "ClusterQueue":
            _legacy_cluster_queue(copy)
        return copy
    if isinstance(api_version, str) and not api_version.startswith("kueue.x-k8s.io/"):
        return copy
    apply = _SCHEMA_DEFAULTS.get(kind) if isinstance(kind, str) else None
    if apply is not None:
        apply(copy)
    return copy


def _add_finalizer(obj: dict[str, Any]) -> None:
    metadata = _child(obj, "metadata", create=True)
    if not isinstance(metadata, dict):
        return
    finalizers = metadata.get("finalizers")
    if finalizers is None:
        metadata["finalizers"] = [RESOURCE_IN_USE_FINALIZER]
    elif isinstance(finalizers, list) and RESOURCE_IN_USE_FINALIZER not in finalizers:
        finalizers.append(RESOURCE_IN_USE_FINALIZER)


def apply_create_defaults(
    obj: Mapping[str, Any], *, partial_admission: bool = True
) -> dict[str, Any]:
    """Section 1.2 mutations (CREATE only) on a copy of ``obj``: pure.

    ClusterQueue and ResourceFlavor get the ``kueue.x-k8s.io/resource-in-use``
    finalizer; a Workload loses every ``minCount`` when partial admission is
    disabled (feature gate ``PartialAdmission``).  Schema defaults are not
    applied here; call ``apply_schema_defaults`` as well.
    """
    copy = plain_copy(obj)
    if not isinstance(copy, dict):
        return copy  # type: ignore[no-any-return]
    kind = copy.get("kind")
    if kind in ("ClusterQueue", "ResourceFlavor"):
        _add_finalizer(copy)
    elif kind == "Workload" and not partial_admission:
        for pod_set in _items(copy.get("spec"), "podSets"):
            if isinstance(pod_set, dict):
                pod_set.pop("minCount", None)
    return copy
