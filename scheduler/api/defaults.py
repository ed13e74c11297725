"""Defaulting of kuota's API objects (docs/validation.md#defaulting).

Two layers, as in Kueue:

* ``apply_schema_defaults`` fills absent fields the way the CRD schema
  of Kueue would (``queueingStrategy: BestEffortFIFO``, pod set ``name:
  main``, ...).  It runs on create and on update, in the webhook and in the
  offline loader, so every code path sees the same object.  An explicitly
  empty string in a defaulted enum field counts as absent (a kuota decision,
  docs/api-differences.md#kuota-decisions).  The defaults are read off each
  kind's ``v1beta2`` description (``scheduler/api/crds/kinds_*.py``), the one
  the CRD schema is generated from; only the legacy ClusterQueue's two are written here.
* ``apply_create_defaults`` is what Kueue's mutating webhooks add on
  CREATE only: the ``resource-in-use`` finalizer, and dropping ``minCount``
  when partial admission is disabled.

Both are pure: they return a new plain-dict copy and never raise, whatever
the input looks like; a field of the wrong type is left alone for validation
to report.  Job/JobSet mutation (docs/validation.md#job-mutation) lives with
the webhook, not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from scheduler.api.crds.catalog import definitions, hub_schema
from scheduler.api.crds.nodes import Leaf, ListNode, ObjectNode
from scheduler.api.refs import LEGACY_API_VERSIONS as LEGACY_VERSIONS
from scheduler.api.refs import RESOURCE_IN_USE_FINALIZER as RESOURCE_IN_USE_FINALIZER


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


def _legacy_cluster_queue(obj: dict[str, Any]) -> None:
    """The two defaults the legacy rules read (the flavor name, ``quota.min``); the
    legacy schema's others (``queueingStrategy``) come with the conversion to v1beta2."""
    for resource in _items(obj.get("spec"), "resources"):
        for flavor in _items(resource, "flavors"):
            _default(flavor, "name", "default")
            quota = flavor.get("quota") if isinstance(flavor, dict) else None
            if isinstance(quota, dict) and quota.get("min") is None:
                quota["min"] = 0


@dataclass(frozen=True)
class _Defaults:
    """The schema defaults below one object node: the parts of the tree that lead to one."""

    scalars: tuple[tuple[str, object, bool], ...]
    """(field, default, is a string): a string counts as absent when empty too."""
    objects: tuple[tuple[str, Any, _Defaults], ...]
    """(field, the object's own default or None, the defaults inside it)."""
    lists: tuple[tuple[str, _Defaults], ...]
    """(field, the defaults inside each item)."""


def _plan(node: ObjectNode) -> _Defaults | None:
    """Pure: the defaults declared below ``node``; scalars before nested objects and lists,
    each in description order, so the defaulted keys come in a stable order."""
    scalars, objects, lists = [], [], []
    for name, child in node.properties.items():
        if isinstance(child, Leaf) and child.default is not None:
            scalars.append((name, child.default, child.type == "string"))
        elif isinstance(child, ObjectNode):
            inner = _plan(child)
            if inner is not None or child.default is not None:
                objects.append((name, child.default, inner or _Defaults((), (), ())))
        elif isinstance(child, ListNode) and isinstance(child.item, ObjectNode):
            inner = _plan(child.item)
            if inner is not None:
                lists.append((name, inner))
    if not (scalars or objects or lists):
        return None
    return _Defaults(tuple(scalars), tuple(objects), tuple(lists))


@cache
def _kind_plan(kind: str) -> _Defaults | None:
    return _plan(hub_schema(kind)) if kind in definitions() else None


def _apply(plan: _Defaults, value: dict[str, Any]) -> None:
    """Apply ``plan`` inside ``value`` (in place)."""
    for name, default, is_string in plan.scalars:
        if is_string:
            _default(value, name, default)
        elif value.get(name) is None:
            value[name] = default
    for name, own_default, inner in plan.objects:
        if own_default is not None and value.get(name) is None:
            value[name] = plain_copy(own_default)
        found = value.get(name)
        if isinstance(found, dict):
            _apply(inner, found)
    for name, inner in plan.lists:
        for item in _items(value, name):
            if isinstance(item, dict):
                _apply(inner, item)


_CREATED_SPEC: Final = frozenset({"ClusterQueue", "LocalQueue"})
"""Kinds whose absent ``spec`` defaulting creates (``{}``, then defaulted), which the
schema would not: the webhook and the loader then see the spec defaults on them too."""


def apply_schema_defaults(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Schema defaults on a copy of ``obj`` (create and update): pure.

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
    plan = _kind_plan(kind) if isinstance(kind, str) else None
    if plan is None:
        return copy
    if kind in _CREATED_SPEC:
        _child(copy, "spec", create=True)
    _apply(plan, copy)
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
    """Create-time mutations (CREATE only) on a copy of ``obj``: pure.

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
