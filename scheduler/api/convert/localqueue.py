"""LocalQueue: legacy (v1alpha1 ``Queue``/``LocalQueue``, v1alpha2) ⇄ v1beta2.

The spec is the same apart from v1beta2's ``stopPolicy`` and ``fairSharing``,
which the legacy form keeps in the ``v1beta2-fields`` annotation.  Kueue
v0.1.x named the kind ``Queue``; kuota accepts it as an alias
(docs/api-differences.md#kuota-decisions) and remembers the spelling so that
the round trip gives it back.  Status: only
``pendingWorkloads`` exists in the legacy form; the rest of the v1beta2 status
is left to the controller.  Nothing stashed here has a legacy counterpart, so
there is no fingerprint to record (annotation_store): a legacy request can
change ``clusterQueue`` and keep the stop policy it cannot see.
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

HUB_ONLY_STATUS: Final = (
    "conditions",
    "reservingWorkloads",
    "admittedWorkloads",
    "flavorsReservation",
    "flavorsUsage",
    "fairSharing",
)


def local_queue_up(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a legacy LocalQueue (or v1alpha1 ``Queue``) to v1beta2: pure."""
    out = base_object(obj, api_version(HUB_VERSION))
    hub_fields = store.take(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(version), warnings)
    legacy_fields: dict[str, Any] = {}
    if obj.get("kind") == "Queue":
        out["kind"] = "LocalQueue"
        legacy_fields["kind"] = "Queue"
        warnings.append(
            "kind Queue is the Kueue v0.1 name of LocalQueue; it was read as a LocalQueue"
        )
    if hub_fields:
        spec = out.setdefault("spec", {})
        if isinstance(spec, dict):
            for name in ("stopPolicy", "fairSharing"):
                if name in hub_fields and name not in spec:
                    spec[name] = deep(hub_fields[name])
    store.put(out, store.fields_key(version), legacy_fields)
    return out


def local_queue_down(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a v1beta2 LocalQueue to the legacy form of ``version``: pure."""
    out = base_object(obj, api_version(version), skip=("spec", "status"))
    legacy_fields = store.take(out, store.fields_key(version), warnings)
    store.take(out, store.HUB_FIELDS, warnings)
    if legacy_fields.get("kind") == "Queue" and version == "v1alpha1":
        out["kind"] = "Queue"
    hub_fields: dict[str, Any] = {}
    if "spec" in obj:
        spec = dict(mapping_at(obj["spec"], FieldPath(("spec",))))
        stop_policy = spec.pop("stopPolicy", None)
        if stop_policy not in (None, "", "None"):
            hub_fields["stopPolicy"] = stop_policy
        if "fairSharing" in spec:
            hub_fields["fairSharing"] = deep(spec.pop("fairSharing"))
        out["spec"] = deep(spec)
    if "status" in obj:
        status = {
            key: deep(value)
            for key, value in mapping_at(obj["status"], FieldPath(("status",))).items()
            if key not in HUB_ONLY_STATUS
        }
        if status:
            out["status"] = status
    store.put(out, store.HUB_FIELDS, hub_fields)
    return out
