"""Resource-group rules, shared by ClusterQueues and Cohorts (CQ-1 … CQ-17, CQ-19,
CQ-20, CQ-23 … CQ-25; docs/validation.md#clusterqueue, docs/validation.md#cohort).

The checks walk ``spec.resourceGroups`` once and remember, for the cross-group
rules, where each flavor and covered resource first appeared. Limit rules that
depend on the owner (a cohort for a ClusterQueue, a parent for a Cohort) are
applied by the caller through ``quota_entries``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.quantity import Quantity
from scheduler.api.validation.formats import (
    check_max,
    check_quantity,
    duplicate_key,
    is_qualified_name,
    is_subdomain,
    mappings,
    negative,
    not_qualified_name,
    not_subdomain,
    parse_quantity,
    render_value,
    required,
    strings,
)

GROUPS = FieldPath(("spec", "resourceGroups"))


def check_resource_groups(groups: object, errors: list[FieldError]) -> None:
    """CQ-1 … CQ-17, CQ-19, CQ-20 on a cleaned ``spec.resourceGroups``."""
    check_max(groups, 16, GROUPS, errors, rule="CQ-1")
    resource_owner: dict[str, int] = {}
    flavor_owner: dict[str, int] = {}
    for g, group in mappings(groups):
        at = GROUPS.index(g)
        covered = group.get("coveredResources")
        if covered is None or covered == []:
            errors.append(
                error(
                    at.child("coveredResources"),
                    "must list at least 1 resource",
                    origin="S",
                    rule="CQ-2",
                )
            )
        check_max(covered, 64, at.child("coveredResources"), errors, rule="CQ-3")
        for j, resource in strings(covered):
            here = at.child("coveredResources").index(j)
            if not is_qualified_name(resource):
                errors.append(
                    error(
                        here, not_qualified_name(resource, "resource name"), origin="W", rule="CQ-4"
                    )
                )
            if resource in resource_owner:
                owner = resource_owner[resource]
                message = (
                    f'resource "{resource}" is listed twice in coveredResources'
                    if owner == g
                    else f'resource "{resource}" is already covered by resourceGroups[{owner}]; '
                    "a resource may belong to only one resource group"
                )
                errors.append(error(here, message, origin="W", rule="CQ-5"))
            else:
                resource_owner[resource] = g
        flavors = group.get("flavors")
        if flavors is None or flavors == []:
            errors.append(
                error(at.child("flavors"), "must list at least 1 flavor", origin="S", rule="CQ-6")
            )
        check_max(flavors, 64, at.child("flavors"), errors, rule="CQ-7")
        covered_names = (
            [item for item in covered if isinstance(item, str)]
            if isinstance(covered, list)
            else None
        )
        for j, flavor in mappings(flavors):
            _check_flavor(
                flavor,
                at.child("flavors").index(j),
                g,
                covered,
                covered_names,
                flavor_owner,
                errors,
            )


def _check_flavor(
    flavor: dict[str, Any],
    at: FieldPath,
    g: int,
    covered: object,
    covered_names: list[str] | None,
    flavor_owner: dict[str, int],
    errors: list[FieldError],
) -> None:
    name = flavor.get("name")
    if name is None or name == "":
        errors.append(
            error(
                at.child("name"), required("give the ResourceFlavor name"), origin="S", rule="CQ-8"
            )
        )
    elif isinstance(name, str):
        if not is_subdomain(name):
            errors.append(
                error(at.child("name"), not_subdomain(name, "flavor name"), origin="S", rule="CQ-8")
            )
        if name in flavor_owner:
            owner = flavor_owner[name]
            if owner == g:
                errors.append(
                    error(
                        at.child("name"),
                        f'flavor "{name}" is listed twice in this resource group',
                        origin="S",
                        rule="CQ-9",
                    )
                )
            else:
                errors.append(
                    error(
                        at.child("name"),
                        f'flavor "{name}" is already used by resourceGroups[{owner}]; '
                        "a flavor may belong to only one resource group",
                        origin="W",
                        rule="CQ-9",
                    )
                )
        else:
            flavor_owner[name] = g
    resources = flavor.get("resources")
    if resources is None or resources == []:
        errors.append(
            error(
                at.child("resources"),
                "must list at least 1 resource quota",
                origin="S",
                rule="CQ-10",
            )
        )
    check_max(resources, 64, at.child("resources"), errors, rule="CQ-11")
    if (
        isinstance(resources, list)
        and resources
        and isinstance(covered, list)
        and covered
        and len(resources) != len(covered)
    ):
        listed = ", ".join(render_value(item) for item in covered)
        errors.append(
            error(
                at.child("resources"),
                f'flavor "{render_value(name)}" gives quotas for {len(resources)} resource(s) but '
                f"the group covers {len(covered)} ({listed}); give exactly one quota per covered "
                "resource, in the same order",
                origin="C",
                rule="CQ-12",
            )
        )
    seen: set[str] = set()
    for k, quota in mappings(resources):
        here = at.child("resources").index(k)
        resource_name = quota.get("name")
        if isinstance(covered, list) and k < len(covered) and isinstance(covered[k], str):
            expected = covered[k]
            if resource_name is None:
                errors.append(
                    error(
                        here.child("name"),
                        required(f'expected "{expected}" (coveredResources[{k}])'),
                        origin="S",
                        rule="CQ-13",
                    )
                )
            elif isinstance(resource_name, str) and resource_name != expected:
                errors.append(
                    error(
                        here.child("name"),
                        f'expected "{expected}" (coveredResources[{k}]) but found '
                        f'"{resource_name}"; list resources in the same order as coveredResources',
                        origin="W",
                        rule="CQ-13",
                    )
                )
        if isinstance(resource_name, str):
            if resource_name in seen:
                errors.append(
                    error(
                        here.child("name"),
                        duplicate_key("resource", resource_name),
                        origin="S",
                        rule="CQ-14",
                    )
                )
            seen.add(resource_name)
        _check_quota_values(quota, here, errors)


def _check_quota_values(quota: dict[str, Any], at: FieldPath, errors: list[FieldError]) -> None:
    if "nominalQuota" not in quota:
        errors.append(
            error(
                at.child("nominalQuota"),
                required("set the quota for this resource (0 is allowed)"),
                origin="S",
                rule="CQ-15",
            )
        )
    for field, rule in (
        ("nominalQuota", "CQ-17"),
        ("borrowingLimit", "CQ-19"),
        ("lendingLimit", "CQ-20"),
    ):
        raw = quota.get(field)
        value = check_quantity(raw, at.child(field), errors, rule="CQ-16")
        if value is not None and value.is_negative():
            errors.append(error(at.child(field), negative(raw), origin="W", rule=rule))


def quota_entries(groups: object) -> Iterator[tuple[FieldPath, dict[str, Any]]]:
    """(path, resource quota entry) for every entry of every flavor: pure."""
    for g, group in mappings(groups):
        for j, flavor in mappings(group.get("flavors")):
            for k, quota in mappings(flavor.get("resources")):
                yield GROUPS.index(g).child("flavors").index(j).child("resources").index(k), quota


def flavor_names(groups: object) -> list[str]:
    """Every flavor name of every group, in order: pure."""
    return [
        flavor["name"]
        for _, group in mappings(groups)
        for _, flavor in mappings(group.get("flavors"))
        if isinstance(flavor.get("name"), str)
    ]


def quantity_or_none(value: object) -> Quantity | None:
    return parse_quantity(value) if value is not None else None


def check_totals(groups: object, errors: list[FieldError]) -> None:
    """CQ-23, CQ-24, CQ-25."""
    group_items = mappings(groups)
    flavor_total = sum(
        len(group["flavors"]) for _, group in group_items if isinstance(group.get("flavors"), list)
    )
    covered_total = sum(
        len(group["coveredResources"])
        for _, group in group_items
        if isinstance(group.get("coveredResources"), list)
    )
    if flavor_total > 256:
        errors.append(
            error(
                GROUPS,
                f"has {flavor_total} flavors in total; at most 256 are allowed across all "
                "resource groups",
                rule="CQ-23",
            )
        )
    if covered_total > 256:
        errors.append(
            error(
                GROUPS,
                f"covers {covered_total} resources in total; at most 256 are allowed across all "
                "resource groups",
                rule="CQ-24",
            )
        )
    for g, group in group_items:
        entries = sum(
            len(flavor["resources"])
            for _, flavor in mappings(group.get("flavors"))
            if isinstance(flavor.get("resources"), list)
        )
        if entries > 512:
            errors.append(
                error(
                    GROUPS.index(g),
                    f"has {entries} flavor/resource quota entries; at most 512 are allowed in one "
                    "resource group",
                    rule="CQ-25",
                )
            )


__all__ = [
    "check_resource_groups",
    "check_totals",
    "quota_entries",
    "flavor_names",
    "quantity_or_none",
]
