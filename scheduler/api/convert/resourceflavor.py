"""ResourceFlavor: legacy top-level ``labels``/``taints`` ⇄ v1beta2 ``spec``.

v1alpha1 kept node labels and taints at the top level of the object (no
spec).  v1alpha2 read node labels from ``metadata.labels`` (late, unreleased
v1alpha2: from a top-level ``nodeSelector`` when present) and kept ``taints``
at the top level (api.md 14.2, 14.7).  v1beta2 moved both under ``spec`` and
added tolerations and a topology, which the legacy form keeps only in the
``v1beta2-fields`` annotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.convert import annotation_store as store
from scheduler.api.convert._common import (
    HUB_VERSION,
    Obj,
    Warnings,
    api_version,
    base_object,
    deep,
    mapping_at,
)
from scheduler.api.field import FieldPath

HUB_ONLY_FIELDS: Final = ("tolerations", "topologyName")


def resource_flavor_up(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a legacy ResourceFlavor to v1beta2: pure."""
    out = base_object(
        obj, api_version(HUB_VERSION), skip=("labels", "taints", "nodeSelector", "spec")
    )
    hub_fields = store.take(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(version), warnings)
    spec: Obj = deep(dict(mapping_at(obj.get("spec"), FieldPath(("spec",)))))
    legacy_fields: dict[str, Any] = {}
    node_labels: Any
    if version == "v1alpha1":
        node_labels = obj.get("labels")
    elif "nodeSelector" in obj:
        node_labels = obj.get("nodeSelector") or None
        object_labels = (
            mapping_at(obj.get("metadata"), FieldPath(("metadata",))).get("labels") or {}
        )
        if (obj.get("nodeSelector") or {}) == object_labels:
            legacy_fields["nodeSelector"] = (
                True  # converting down would not write it back otherwise
            )
    else:
        node_labels = (
            mapping_at(obj.get("metadata"), FieldPath(("metadata",))).get("labels") or None
        )
    if node_labels is not None:
        spec["nodeLabels"] = deep(node_labels)
    if "taints" in obj:
        spec["nodeTaints"] = deep(obj["taints"])
    for name in HUB_ONLY_FIELDS:
        if name in hub_fields and name not in spec:
            spec[name] = deep(hub_fields[name])
    out["spec"] = spec
    store.put(out, store.fields_key(version), legacy_fields)
    return out


def resource_flavor_down(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a v1beta2 ResourceFlavor to the legacy form of ``version``: pure."""
    out = base_object(obj, api_version(version), skip=("spec",))
    legacy_fields = store.take(out, store.fields_key(version), warnings)
    store.take(out, store.HUB_FIELDS, warnings)
    spec = dict(mapping_at(obj.get("spec"), FieldPath(("spec",))))
    node_labels = spec.pop("nodeLabels", None)
    taints = spec.pop("nodeTaints", None)
    hub_fields: Obj = {name: deep(spec.pop(name)) for name in HUB_ONLY_FIELDS if name in spec}
    if version == "v1alpha1":
        if node_labels is not None:
            out["labels"] = deep(node_labels)
    else:
        object_labels = (
            mapping_at(out.get("metadata"), FieldPath(("metadata",))).get("labels") or {}
        )
        if legacy_fields.get("nodeSelector") or (node_labels or {}) != object_labels:
            out["nodeSelector"] = deep(node_labels or {})
    if taints is not None:
        out["taints"] = deep(taints)
    if spec:
        out["spec"] = deep(spec)  # fields unknown to both versions travel unchanged
    store.put(out, store.HUB_FIELDS, hub_fields)
    return out
