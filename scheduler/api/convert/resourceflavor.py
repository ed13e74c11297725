"""ResourceFlavor: legacy top-level ``labels``/``taints`` ⇄ v1beta2 ``spec``.

v1alpha1 kept node labels and taints at the top level of the object (no
spec).  v1alpha2 read node labels from ``metadata.labels`` (late, unreleased
v1alpha2: from a top-level ``nodeSelector`` when present) and kept ``taints``
at the top level (docs/api-differences.md#the-v1alpha1-and-v1alpha2-forms).
v1beta2 moved both under ``spec`` and added tolerations and a topology, which
the legacy form keeps only in the ``v1beta2-fields`` annotation.

The v1alpha2 ``nodeSelector`` is the one place where a lower-version field
competes with another: when present it wins over ``metadata.labels``.  Going
down, it is written either because the user wrote it in v1alpha2 (the
``v1alpha2-fields`` annotation says so, with a fingerprint of the
``spec.nodeLabels`` it gave) or only to carry ``spec.nodeLabels`` that differ
from the object labels.  In the second case it is a conversion artifact: the
``v1beta2-fields`` annotation records the fingerprints of both fields as
written, and going up the artifact wins only while ``metadata.labels`` are
unchanged.  A v1alpha2 manifest that changes the labels and does not touch
the ``nodeSelector`` (as ``kubectl apply`` after a v1beta2 apply does) sets
the node labels, as v1alpha2 says it should (annotation_store: a stash never
overrides what a request sets).  What stays ambiguous: such a manifest that
also repeats the artifact's exact ``nodeSelector`` reads the same, and the
labels win.
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
# Field paths of the fingerprints (annotation_store.record).
SELECTOR: Final = "nodeSelector"
OBJECT_LABELS: Final = "metadata.labels"
NODE_LABELS: Final = "spec.nodeLabels"


def resource_flavor_up(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a legacy ResourceFlavor to v1beta2: pure."""
    out = base_object(
        obj, api_version(HUB_VERSION), skip=("labels", "taints", "nodeSelector", "spec")
    )
    hub_fields, shadows = store.take_guarded(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(version), warnings)
    spec: Obj = deep(dict(mapping_at(obj.get("spec"), FieldPath(("spec",)))))
    legacy_fields: dict[str, Any] = {}
    object_labels = _object_labels(obj)
    node_labels: Any
    if version == "v1alpha1":
        node_labels = obj.get("labels")
    elif "nodeSelector" in obj and not _stale_selector(obj, object_labels, shadows, warnings):
        node_labels = obj.get("nodeSelector") or None
        if not shadows.unchanged(SELECTOR, obj.get("nodeSelector") or {}):
            # The user's own: converting down writes it back, and not as an artifact.
            legacy_fields["nodeSelector"] = True
            store.record(legacy_fields, {NODE_LABELS: node_labels})
    else:
        node_labels = object_labels or None
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


def _object_labels(obj: Mapping[str, Any]) -> dict[str, Any]:
    return dict(mapping_at(obj.get("metadata"), FieldPath(("metadata",))).get("labels") or {})


def _stale_selector(
    obj: Mapping[str, Any],
    object_labels: Mapping[str, Any],
    shadows: store.Shadowed,
    warnings: Warnings,
) -> bool:
    """True when ``nodeSelector`` is a down-conversion artifact the request left behind: pure.

    That is: it is still exactly what converting down wrote, while the
    ``metadata.labels`` written next to it were changed.  Appends a warning.
    """
    selector = obj.get("nodeSelector") or {}
    if not (
        shadows.unchanged(SELECTOR, selector) and shadows.changed(OBJECT_LABELS, object_labels)
    ):
        return False
    warnings.append(
        "nodeSelector was written by conversion from the v1beta2 spec.nodeLabels and "
        "metadata.labels changed since; metadata.labels are the node labels"
    )
    return True


def resource_flavor_down(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a v1beta2 ResourceFlavor to the legacy form of ``version``: pure."""
    out = base_object(obj, api_version(version), skip=("spec",))
    legacy_fields, legacy_shadows = store.take_guarded(out, store.fields_key(version), warnings)
    store.take(out, store.HUB_FIELDS, warnings)
    spec = dict(mapping_at(obj.get("spec"), FieldPath(("spec",))))
    node_labels = spec.pop("nodeLabels", None)
    taints = spec.pop("nodeTaints", None)
    hub_fields: Obj = {name: deep(spec.pop(name)) for name in HUB_ONLY_FIELDS if name in spec}
    if version == "v1alpha1":
        if node_labels is not None:
            out["labels"] = deep(node_labels)
    else:
        object_labels = _object_labels(out)
        # The user's own nodeSelector, as long as no v1beta2 write changed the labels it gave.
        written_by_user = bool(legacy_fields.get("nodeSelector")) and not legacy_shadows.changed(
            NODE_LABELS, node_labels
        )
        if written_by_user:
            out["nodeSelector"] = deep(node_labels or {})
        elif (node_labels or {}) != object_labels:
            out["nodeSelector"] = deep(node_labels or {})
            store.record(hub_fields, {SELECTOR: out["nodeSelector"], OBJECT_LABELS: object_labels})
    if taints is not None:
        out["taints"] = deep(taints)
    if spec:
        out["spec"] = deep(spec)  # fields unknown to both versions travel unchanged
    store.put(out, store.HUB_FIELDS, hub_fields)
    return out
