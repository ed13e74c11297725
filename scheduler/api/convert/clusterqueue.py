"""ClusterQueue: legacy ``spec.resources`` (v1alpha1/v1alpha2) ⇄ v1beta2 ``resourceGroups``.

The legacy form lists, per resource, the flavors and their ``quota.min`` /
``quota.max``.  Resources whose flavor lists are identical (same names, same
order) are *codependent* and share one flavor per pod set at admission; that
is exactly what a v1beta2 resource group says, so each class of identical
lists becomes one group (docs/api-differences.md#the-v1alpha1-and-v1alpha2-forms).
``min`` is the nominal quota and, in a
cohort, ``max - min`` the borrowing limit.

What one side cannot say travels in the conversion annotations
(annotations.py): going up, a ``max`` without a cohort (it had no effect) and
the original resource order; going down, every v1beta2-only field that is not
at its default, and lending limits.  The legacy rules must hold before
:func:`cluster_queue_up` runs (the package entry point checks them), so the
flavor lists are pairwise identical or disjoint here.

One stashed field overlaps what the legacy form can say: a v1beta2
``preemption`` whose ``withinClusterQueue``/``reclaimWithinCohort`` the
legacy spec did not show (late v1alpha2 has those two fields).  Going down,
the annotation records the fingerprint of the legacy ``spec.preemption`` as
written; going up, when the request changed it, those two keys come from the
request alone and only what v1alpha2 cannot say (``borrowWithinCohort``) is
taken from the stash (annotation_store: a stash never overrides what a
request sets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.convert import annotation_store as store
from scheduler.api.convert._common import (
    HUB_VERSION,
    ConversionError,
    Obj,
    Warnings,
    api_version,
    base_object,
    canonical_at,
    deep,
    list_at,
    mapping_at,
    quantity_at,
)
from scheduler.api.field import FieldPath

DEFAULT_FLAVOR_NAME: Final = "default"

PREEMPTION_DEFAULTS: Final[Mapping[str, str]] = {
    "withinClusterQueue": "Never",
    "reclaimWithinCohort": "Never",
}
FUNGIBILITY_DEFAULTS: Final[Mapping[str, str]] = {
    "whenCanBorrow": "MayStopSearch",
    "whenCanPreempt": "TryNextFlavor",
}
LEGACY_PREEMPTION_FIELDS: Final = ("withinClusterQueue", "reclaimWithinCohort")
LEGACY_PREEMPTION: Final = "spec.preemption"  # the fingerprinted field (annotation_store.record)
HUB_ONLY_SPEC_FIELDS: Final = (
    "preemption",
    "flavorFungibility",
    "admissionChecksStrategy",
    "stopPolicy",
    "fairSharing",
    "admissionScope",
    "concurrentAdmissionPolicy",
)


# --- defaults: values equal to them are not stored --------------------------


def is_default_preemption(preemption: Any) -> bool:
    """True when ``preemption`` means exactly the v1beta2 default (all Never): pure."""
    if not isinstance(preemption, Mapping):
        return preemption is None
    for key, value in preemption.items():
        if key in PREEMPTION_DEFAULTS:
            if value not in ("", None, PREEMPTION_DEFAULTS[key]):
                return False
        elif key == "borrowWithinCohort":
            if not isinstance(value, Mapping) or any(
                sub != "policy" or policy not in ("", None, "Never")
                for sub, policy in value.items()
            ):
                return False
        else:
            return False
    return True


def is_default_fungibility(fungibility: Any) -> bool:
    """True when ``flavorFungibility`` means exactly the v1beta2 default: pure."""
    if not isinstance(fungibility, Mapping):
        return fungibility is None
    return all(
        key in FUNGIBILITY_DEFAULTS and value in ("", None, FUNGIBILITY_DEFAULTS[key])
        for key, value in fungibility.items()
    )


def is_default_hub_field(name: str, value: Any) -> bool:
    """True when a v1beta2-only ClusterQueue spec field needs no annotation: pure."""
    if name == "preemption":
        return is_default_preemption(value)
    if name == "flavorFungibility":
        return is_default_fungibility(value)
    if name == "stopPolicy":
        return value in ("", None, "None")
    return value is None


# --- up: legacy → v1beta2 ------------------------------------------------------


def cluster_queue_up(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a (valid) legacy ClusterQueue to v1beta2: pure."""
    out = base_object(obj, api_version(HUB_VERSION), skip=("spec", "status"))
    hub_fields, shadows = store.take_guarded(out, store.HUB_FIELDS, warnings)
    store.take(out, store.fields_key(version), warnings)  # stale copy from an earlier trip
    spec = mapping_at(obj.get("spec"), FieldPath(("spec",)))
    hub_fields = _without_overridden_preemption(hub_fields, spec, shadows, warnings)
    legacy_fields: dict[str, Any] = {}
    new_spec: Obj = {}
    for key, value in spec.items():
        if key == "cohort":
            new_spec["cohortName"] = deep(value)
        elif key == "queueingStrategy":
            new_spec["queueingStrategy"] = value or "BestEffortFIFO"
        elif key == "resources":
            groups, max_without_cohort, order = _groups_from_resources(
                value, bool(spec.get("cohort"))
            )
            new_spec["resourceGroups"] = groups
            if max_without_cohort:
                legacy_fields["maxWithoutCohort"] = max_without_cohort
                for entry in max_without_cohort:
                    warnings.append(
                        f"quota.max of {entry['resource']}/{entry['flavor']} has no effect "
                        "without a cohort; it was kept only in an annotation"
                    )
            if order is not None:
                legacy_fields["resourceOrder"] = order
        elif key == "preemption":
            new_spec["preemption"] = deep(value)
            legacy_fields["preemptionInSpec"] = True
        else:
            new_spec[key] = deep(value)
    if "spec" in obj:
        out["spec"] = new_spec
    if hub_fields:
        out = store.apply_safely(out, _restore_hub_fields, hub_fields, store.HUB_FIELDS, warnings)
    if "status" in obj:
        out["status"] = _status_up(mapping_at(obj["status"], FieldPath(("status",))))
    store.put(out, store.fields_key(version), legacy_fields)
    return out


def _without_overridden_preemption(
    hub_fields: dict[str, Any],
    spec: Mapping[str, Any],
    shadows: store.Shadowed,
    warnings: Warnings,
) -> dict[str, Any]:
    """The stash, minus the preemption keys the request set in the legacy spec: pure."""
    stashed = hub_fields.get("preemption")
    if not isinstance(stashed, Mapping) or not shadows.changed(
        LEGACY_PREEMPTION, spec.get("preemption")
    ):
        return hub_fields
    overridden = [key for key in LEGACY_PREEMPTION_FIELDS if key in stashed]
    if not overridden:
        return hub_fields
    kept = {key: value for key, value in stashed.items() if key not in LEGACY_PREEMPTION_FIELDS}
    result = {key: value for key, value in hub_fields.items() if key != "preemption"}
    if kept:
        result["preemption"] = kept
    warnings.append(
        f"spec.preemption was changed since the annotation {store.HUB_FIELDS} was written; "
        f"its {' and '.join(overridden)} are the request's"
    )
    return result


def _groups_from_resources(
    resources: Any, in_cohort: bool
) -> tuple[list[Obj], list[dict[str, str]], list[str] | None]:
    """Partition legacy resources into groups of identical flavor lists (steps 3-7): pure."""
    path = FieldPath(("spec", "resources"))
    classes: dict[tuple[str, ...], list[tuple[int, Mapping[str, Any]]]] = {}
    original_order: list[str] = []
    for index, resource in enumerate(list_at(resources, path)):
        resource = mapping_at(resource, path.index(index))
        original_order.append(str(resource.get("name")))
        flavors = list_at(resource.get("flavors"), path.index(index).child("flavors"))
        names = tuple(_flavor_name(flavor) for flavor in flavors)
        classes.setdefault(names, []).append((index, resource))
    groups: list[Obj] = []
    max_without_cohort: list[dict[str, str]] = []
    for flavor_names, members in classes.items():
        group_flavors: list[Obj] = [{"name": name, "resources": []} for name in flavor_names]
        for index, resource in members:
            flavors_path = path.index(index).child("flavors")
            for position, flavor in enumerate(resource.get("flavors") or []):
                quota_path = flavors_path.index(position).child("quota")
                quota = mapping_at(flavor.get("quota"), quota_path)
                entry = _quota_up(quota, quota_path, in_cohort)
                entry = {"name": resource.get("name"), **entry}
                group_flavors[position]["resources"].append(entry)
                if quota.get("max") is not None and not in_cohort:
                    max_without_cohort.append(
                        {
                            "resource": str(resource.get("name")),
                            "flavor": flavor_names[position],
                            "max": canonical_at(quota["max"], quota_path.child("max")),
                        }
                    )
        groups.append(
            {
                "coveredResources": [resource.get("name") for _, resource in members],
                "flavors": group_flavors,
            }
        )
    converted_order = [str(name) for group in groups for name in group["coveredResources"]]
    return (
        groups,
        max_without_cohort,
        (original_order if original_order != converted_order else None),
    )


def _flavor_name(flavor: Any) -> str:
    if isinstance(flavor, Mapping) and flavor.get("name"):
        return str(flavor["name"])
    return DEFAULT_FLAVOR_NAME


def _quota_up(quota: Mapping[str, Any], path: FieldPath, in_cohort: bool) -> Obj:
    """``{min, max}`` → ``{nominalQuota, borrowingLimit}``: pure."""
    minimum = quantity_at(quota["min"], path.child("min")) if quota.get("min") is not None else None
    entry: Obj = {"nominalQuota": str(minimum) if minimum is not None else "0"}
    if quota.get("max") is not None and in_cohort:
        maximum = quantity_at(quota["max"], path.child("max"))
        entry["borrowingLimit"] = str(maximum - minimum) if minimum is not None else str(maximum)
    return entry


def _restore_hub_fields(out: Obj, stored: Mapping[str, Any]) -> None:
    """Put back v1beta2-only fields kept by an earlier down-conversion (mutates ``out``)."""
    spec = out.setdefault("spec", {})
    for name in HUB_ONLY_SPEC_FIELDS:
        if name not in stored:
            continue
        if name == "preemption" and isinstance(spec.get("preemption"), dict):
            merged = dict(stored["preemption"])
            merged.update(spec["preemption"])
            spec["preemption"] = merged
        elif name not in spec:
            spec[name] = deep(stored[name])
    if not spec.get("cohortName"):
        return  # a lending limit needs a cohort; it no longer fits
    for item in stored.get("lendingLimits", []):
        for group in spec.get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                if flavor.get("name") != item["flavor"]:
                    continue
                for quota in flavor.get("resources") or []:
                    if quota.get("name") == item["resource"]:
                        limit = quantity_at(
                            item["lendingLimit"], FieldPath(("metadata", "annotations"))
                        )
                        if limit <= quantity_at(quota["nominalQuota"], FieldPath(("spec",))):
                            quota["lendingLimit"] = item["lendingLimit"]


def _status_up(status: Mapping[str, Any]) -> Obj:
    """Legacy status → v1beta2 status: pure."""
    out: Obj = {}
    for key, value in status.items():
        if key == "usedResources":
            usage = _flavors_usage_from_used(value)
            out["flavorsUsage"] = usage
            out["flavorsReservation"] = deep(usage)
        elif key == "admittedWorkloads":
            out["admittedWorkloads"] = value
            out["reservingWorkloads"] = value
        else:
            out[key] = deep(value)
    return out


def _flavors_usage_from_used(used: Any) -> list[Obj]:
    path = FieldPath(("status", "usedResources"))
    by_flavor: dict[str, list[Obj]] = {}
    for resource, flavors in mapping_at(used, path).items():
        for flavor, amounts in mapping_at(flavors, path.key(resource)).items():
            amounts_path = path.key(resource).key(flavor)
            amounts = mapping_at(amounts, amounts_path)
            entry: Obj = {"name": resource}
            if amounts.get("total") is not None:
                entry["total"] = canonical_at(amounts["total"], amounts_path.child("total"))
            if amounts.get("borrowing") is not None:
                entry["borrowed"] = canonical_at(
                    amounts["borrowing"], amounts_path.child("borrowing")
                )
            by_flavor.setdefault(flavor, []).append(entry)
    return [{"name": flavor, "resources": resources} for flavor, resources in by_flavor.items()]


# --- down: v1beta2 → legacy ----------------------------------------------------


def cluster_queue_down(obj: Mapping[str, Any], version: str, warnings: Warnings) -> Obj:
    """Convert a v1beta2 ClusterQueue to the legacy form of ``version``: pure."""
    out = base_object(obj, api_version(version), skip=("spec", "status"))
    legacy_fields = store.take(out, store.fields_key(version), warnings)
    store.take(out, store.HUB_FIELDS, warnings)  # stale copy from an earlier trip
    spec = mapping_at(obj.get("spec"), FieldPath(("spec",)))
    if "resources" in spec:
        raise ConversionError(
            "spec.resources",
            'unknown field "resources"; v1beta2 ClusterQueues use spec.resourceGroups (see '
            'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
        )
    hub_fields: dict[str, Any] = {}
    new_spec: Obj = {}
    for key, value in spec.items():
        if key == "cohortName":
            new_spec["cohort"] = deep(value)
        elif key == "resourceGroups":
            resources, lending = _resources_from_groups(value)
            new_spec["resources"] = resources
            if lending:
                hub_fields["lendingLimits"] = lending
        elif (
            key == "preemption"
            and legacy_fields.get("preemptionInSpec")
            and isinstance(value, Mapping)
        ):
            new_spec["preemption"] = {
                k: deep(v) for k, v in value.items() if k in LEGACY_PREEMPTION_FIELDS
            }
            rest = {k: deep(v) for k, v in value.items() if k not in LEGACY_PREEMPTION_FIELDS}
            if rest and not is_default_preemption(rest):
                hub_fields["preemption"] = rest
        elif key in HUB_ONLY_SPEC_FIELDS:
            if not is_default_hub_field(key, value):
                hub_fields[key] = deep(value)
        else:
            new_spec[key] = deep(value)
    if legacy_fields:
        new_spec = store.apply_safely(
            new_spec, _restore_legacy_fields, legacy_fields, store.fields_key(version), warnings
        )
    if "spec" in obj:
        out["spec"] = new_spec
    if "status" in obj:
        status = _status_down(mapping_at(obj["status"], FieldPath(("status",))))
        if status:
            out["status"] = status
    stashed_preemption = hub_fields.get("preemption")
    if isinstance(stashed_preemption, Mapping) and any(
        key in stashed_preemption for key in LEGACY_PREEMPTION_FIELDS
    ):
        store.record(hub_fields, {LEGACY_PREEMPTION: new_spec.get("preemption")})
    store.put(out, store.HUB_FIELDS, _ordered_hub_fields(hub_fields))
    return out


def _ordered_hub_fields(hub_fields: Mapping[str, Any]) -> dict[str, Any]:
    order = (*HUB_ONLY_SPEC_FIELDS, "lendingLimits", store.SHADOWED)
    return {name: hub_fields[name] for name in order if name in hub_fields}


def _resources_from_groups(groups: Any) -> tuple[list[Obj], list[dict[str, str]]]:
    """Groups → one legacy resource per covered resource (steps 2-3, 5): pure."""
    path = FieldPath(("spec", "resourceGroups"))
    resources: list[Obj] = []
    lending: list[dict[str, str]] = []
    for group_index, group in enumerate(list_at(groups, path)):
        group_path = path.index(group_index)
        group = mapping_at(group, group_path)
        flavors = list_at(group.get("flavors"), group_path.child("flavors"))
        for resource_name in list_at(
            group.get("coveredResources"), group_path.child("coveredResources")
        ):
            legacy_flavors: list[Obj] = []
            for flavor_index, flavor in enumerate(flavors):
                flavor_path = group_path.child("flavors").index(flavor_index)
                flavor = mapping_at(flavor, flavor_path)
                quota, quota_path = _find_quota(flavor, resource_name, flavor_path)
                legacy_quota: Obj = {}
                if quota.get("nominalQuota") is None:
                    raise ConversionError(
                        str(quota_path.child("nominalQuota")),
                        "required: set the quota for this resource (0 is allowed)",
                    )
                nominal = quantity_at(quota["nominalQuota"], quota_path.child("nominalQuota"))
                legacy_quota["min"] = str(nominal)
                if quota.get("borrowingLimit") is not None:
                    borrowing = quantity_at(
                        quota["borrowingLimit"], quota_path.child("borrowingLimit")
                    )
                    legacy_quota["max"] = str(nominal + borrowing)
                if quota.get("lendingLimit") is not None:
                    lending.append(
                        {
                            "flavor": str(flavor.get("name")),
                            "resource": str(resource_name),
                            "lendingLimit": canonical_at(
                                quota["lendingLimit"], quota_path.child("lendingLimit")
                            ),
                        }
                    )
                legacy_flavors.append({"name": flavor.get("name"), "quota": legacy_quota})
            resources.append({"name": resource_name, "flavors": legacy_flavors})
    return resources, lending


def _find_quota(
    flavor: Mapping[str, Any], resource: Any, flavor_path: FieldPath
) -> tuple[Mapping[str, Any], FieldPath]:
    quotas_path = flavor_path.child("resources")
    for index, quota in enumerate(list_at(flavor.get("resources"), quotas_path)):
        if isinstance(quota, Mapping) and quota.get("name") == resource:
            return quota, quotas_path.index(index)
    raise ConversionError(
        str(quotas_path),
        f'flavor "{flavor.get("name")}" gives no quota for covered resource "{resource}"; '
        "the legacy form needs a quota for every (resource, flavor) pair",
    )


def _restore_legacy_fields(spec: Obj, stored: Mapping[str, Any]) -> None:
    """Apply ``maxWithoutCohort`` and ``resourceOrder`` (mutates ``spec``)."""
    resources = spec.get("resources")
    if not isinstance(resources, list):
        return
    if not spec.get("cohort"):
        for item in stored.get("maxWithoutCohort", []):
            for resource in resources:
                if resource.get("name") != item["resource"]:
                    continue
                for flavor in resource["flavors"]:
                    quota = flavor["quota"]
                    if flavor.get("name") != item["flavor"] or "max" in quota:
                        continue
                    maximum = quantity_at(item["max"], FieldPath(("metadata", "annotations")))
                    if maximum >= quantity_at(quota["min"], FieldPath(("spec",))):
                        quota["max"] = str(maximum)
    order = stored.get("resourceOrder")
    if isinstance(order, list):
        rank = {str(name): position for position, name in enumerate(order)}
        listed = sorted(
            (r for r in resources if str(r.get("name")) in rank),
            key=lambda r: rank[str(r.get("name"))],
        )
        unlisted = [r for r in resources if str(r.get("name")) not in rank]
        spec["resources"] = listed + unlisted


def _status_down(status: Mapping[str, Any]) -> Obj:
    """v1beta2 status → legacy status: pure; status is not round-tripped."""
    out: Obj = {}
    for key, value in status.items():
        if key == "flavorsUsage":
            out["usedResources"] = _used_from_flavors_usage(value)
        elif key in ("conditions", "flavorsReservation", "reservingWorkloads", "fairSharing"):
            continue
        else:
            out[key] = deep(value)
    return out


def _used_from_flavors_usage(usage: Any) -> dict[str | None, dict[str | None, Obj]]:
    path = FieldPath(("status", "flavorsUsage"))
    # The schema requires both names; a status without one keeps a None key, as it always has.
    used: dict[str | None, dict[str | None, Obj]] = {}
    for flavor_index, flavor in enumerate(list_at(usage, path)):
        flavor = mapping_at(flavor, path.index(flavor_index))
        for resource_index, resource in enumerate(
            list_at(flavor.get("resources"), path.index(flavor_index).child("resources"))
        ):
            resource_path = path.index(flavor_index).child("resources").index(resource_index)
            resource = mapping_at(resource, resource_path)
            amounts: Obj = {}
            if resource.get("total") is not None:
                amounts["total"] = canonical_at(resource["total"], resource_path.child("total"))
            if resource.get("borrowed") is not None:
                amounts["borrowing"] = canonical_at(
                    resource["borrowed"], resource_path.child("borrowed")
                )
            used.setdefault(resource.get("name"), {})[flavor.get("name")] = amounts
    return used
