"""Parsers of the shapes several kinds share (metadata, selectors, quotas…).

Each function takes a raw map already known to be a map, the path it sits
at and the ``Reader`` collecting errors, and returns the model with the
schema defaults of api.md applied.  All are pure apart from appending to the
reader's error list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldPath
from scheduler.api.models.common import (
    Condition,
    FairSharing,
    FairSharingStatus,
    FlavorQuotas,
    FlavorUsage,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    OwnerReference,
    ResourceGroup,
    ResourceQuota,
    ResourceUsage,
    Taint,
    Toleration,
    frozen_map,
)
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity
from scheduler.api.refs import FlavorName, ResourceName

Raw = Mapping[str, Any]


def parse_metadata(reader: Reader, raw: Raw, path: FieldPath) -> ObjectMeta:
    return ObjectMeta(
        name=reader.text(raw, "name", path),
        generate_name=reader.text(raw, "generateName", path),
        namespace=reader.text(raw, "namespace", path),
        uid=reader.text(raw, "uid", path),
        labels=frozen_map(reader.string_map(raw, "labels", path)),
        annotations=frozen_map(reader.string_map(raw, "annotations", path)),
        creation_timestamp=reader.timestamp(raw, "creationTimestamp", path),
        deletion_timestamp=reader.timestamp(raw, "deletionTimestamp", path),
        resource_version=reader.text(raw, "resourceVersion", path),
        generation=reader.integer(raw, "generation", path, bits=64) or 0,
        finalizers=reader.strings(raw, "finalizers", path),
        owner_references=reader.objects(raw, "ownerReferences", path, _owner_reference(reader)),
    )


def _owner_reference(reader: Reader) -> Any:
    def build(raw: Raw, path: FieldPath) -> OwnerReference:
        return OwnerReference(
            api_version=reader.text(raw, "apiVersion", path),
            kind=reader.text(raw, "kind", path),
            name=reader.text(raw, "name", path),
            uid=reader.text(raw, "uid", path),
            controller=bool(reader.boolean(raw, "controller", path)),
            block_owner_deletion=bool(reader.boolean(raw, "blockOwnerDeletion", path)),
        )

    return build


def parse_label_selector(reader: Reader, raw: Raw, path: FieldPath) -> LabelSelector:
    def requirement(item: Raw, item_path: FieldPath) -> LabelSelectorRequirement:
        return LabelSelectorRequirement(
            key=reader.text(item, "key", item_path),
            operator=reader.text(item, "operator", item_path),
            values=reader.strings(item, "values", item_path),
        )

    return LabelSelector(
        match_labels=frozen_map(reader.string_map(raw, "matchLabels", path)),
        match_expressions=reader.objects(raw, "matchExpressions", path, requirement),
    )


def optional_label_selector(
    reader: Reader, raw: Raw, key: str, path: FieldPath
) -> LabelSelector | None:
    """``None`` when absent: an absent selector matches nothing (api.md 0.4)."""
    selector = reader.object(raw, key, path)
    return None if selector is None else parse_label_selector(reader, selector, path.child(key))


def parse_conditions(reader: Reader, raw: Raw, path: FieldPath) -> tuple[Condition, ...]:
    def condition(item: Raw, item_path: FieldPath) -> Condition:
        return Condition(
            type=reader.text(item, "type", item_path),
            status=reader.text(item, "status", item_path),
            reason=reader.text(item, "reason", item_path),
            message=reader.text(item, "message", item_path),
            last_transition_time=reader.timestamp(item, "lastTransitionTime", item_path),
            observed_generation=reader.integer(item, "observedGeneration", item_path, bits=64),
        )

    return reader.objects(raw, "conditions", path, condition)


def parse_taint(reader: Reader, raw: Raw, path: FieldPath) -> Taint:
    return Taint(
        key=reader.text(raw, "key", path),
        value=reader.text(raw, "value", path),
        effect=reader.text(raw, "effect", path),
        time_added=reader.timestamp(raw, "timeAdded", path),
    )


def parse_toleration(reader: Reader, raw: Raw, path: FieldPath) -> Toleration:
    return Toleration(
        key=reader.text(raw, "key", path),
        operator=reader.enum(raw, "operator", path, "Equal"),
        value=reader.text(raw, "value", path),
        effect=reader.text(raw, "effect", path),
        toleration_seconds=reader.integer(raw, "tolerationSeconds", path, bits=64),
    )


def tolerations(reader: Reader, raw: Raw, key: str, path: FieldPath) -> tuple[Toleration, ...]:
    return reader.objects(
        raw, key, path, lambda item, item_path: parse_toleration(reader, item, item_path)
    )


def optional_fair_sharing(reader: Reader, raw: Raw, path: FieldPath) -> FairSharing | None:
    """``spec.fairSharing``; ``weight`` defaults to 1 when the object is present (api.md 2.4)."""
    fair = reader.object(raw, "fairSharing", path)
    if fair is None:
        return None
    weight = reader.quantity(fair, "weight", path.child("fairSharing"))
    return FairSharing(weight=weight if weight is not None else Quantity.from_units(1))


def optional_fair_sharing_status(
    reader: Reader, raw: Raw, path: FieldPath
) -> FairSharingStatus | None:
    fair = reader.object(raw, "fairSharing", path)
    if fair is None:
        return None
    return FairSharingStatus(
        weighted_share=reader.integer(fair, "weightedShare", path.child("fairSharing"), bits=64)
        or 0
    )


def parse_resource_groups(reader: Reader, raw: Raw, path: FieldPath) -> tuple[ResourceGroup, ...]:
    """``resourceGroups`` of a ClusterQueue or Cohort (api.md 2.1–2.3)."""

    def resource(item: Raw, item_path: FieldPath) -> ResourceQuota:
        return ResourceQuota(
            name=ResourceName(reader.text(item, "name", item_path)),
            nominal_quota=reader.quantity(item, "nominalQuota", item_path),
            borrowing_limit=reader.quantity(item, "borrowingLimit", item_path),
            lending_limit=reader.quantity(item, "lendingLimit", item_path),
        )

    def flavor(item: Raw, item_path: FieldPath) -> FlavorQuotas:
        return FlavorQuotas(
            name=FlavorName(reader.text(item, "name", item_path)),
            resources=reader.objects(item, "resources", item_path, resource),
        )

    def group(item: Raw, item_path: FieldPath) -> ResourceGroup:
        return ResourceGroup(
            covered_resources=tuple(
                ResourceName(name) for name in reader.strings(item, "coveredResources", item_path)
            ),
            flavors=reader.objects(item, "flavors", item_path, flavor),
        )

    return reader.objects(raw, "resourceGroups", path, group)


def parse_flavor_usages(
    reader: Reader, raw: Raw, key: str, path: FieldPath
) -> tuple[FlavorUsage, ...]:
    """``flavorsUsage`` / ``flavorsReservation`` of a ClusterQueue status (api.md 2.6)."""

    def usage(item: Raw, item_path: FieldPath) -> ResourceUsage:
        return ResourceUsage(
            name=ResourceName(reader.text(item, "name", item_path)),
            total=reader.quantity(item, "total", item_path) or Quantity.zero(),
            borrowed=reader.quantity(item, "borrowed", item_path) or Quantity.zero(),
        )

    def flavor(item: Raw, item_path: FieldPath) -> FlavorUsage:
        return FlavorUsage(
            name=FlavorName(reader.text(item, "name", item_path)),
            resources=reader.objects(item, "resources", item_path, usage),
        )

    return reader.objects(raw, key, path, flavor)
