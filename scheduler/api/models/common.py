"""Shared building blocks of every kind: metadata, selectors, conditions, taints.

These are the ``v1beta2`` shapes shared by several kinds, as frozen
dataclasses.  Lists become tuples and maps become read-only mappings, so a
model can be shared between the cache, snapshots and the webhook without
anyone mutating it behind another's back.  Presence matters in a few places
and is kept: a ``None`` selector matches nothing while an empty one matches
everything (docs/validation.md#field-formats), and a ``None`` quantity or timestamp means the
manifest did not give one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import TypeVar

from scheduler.api.quantity import Quantity
from scheduler.api.refs import FlavorName, ResourceName

K = TypeVar("K")
V = TypeVar("V")


def frozen_map(items: Mapping[K, V] | None = None) -> Mapping[K, V]:
    """A read-only copy of ``items`` (empty when None): pure."""
    return MappingProxyType(dict(items or {}))


# How the parser fills a field, where its JSON name and type are not enough
# (``scheduler.api.parse.binding`` reads these from the field's metadata).
READ_FROM_KEY = "read_from"
KEEPS_EMPTY_KEY = "keeps_empty"


def read_from(*path: str) -> Mapping[str, object]:
    """Field metadata: the value sits at ``path`` below this object (a flattened field)."""
    return MappingProxyType({READ_FROM_KEY: path})


KEEPS_EMPTY: Mapping[str, object] = MappingProxyType({KEEPS_EMPTY_KEY: True})
"""Field metadata: an explicitly empty string is kept as ``""``, not read as absent."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerReference:
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False
    block_owner_deletion: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectMeta:
    """``metadata`` of any object; absent strings are ``""``, absent times ``None``."""

    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=frozen_map)
    annotations: Mapping[str, str] = field(default_factory=frozen_map)
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    resource_version: str = ""
    generation: int = 0
    finalizers: tuple[str, ...] = ()
    owner_references: tuple[OwnerReference, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelSelector:
    """A label selector; an empty one matches everything."""

    match_labels: Mapping[str, str] = field(default_factory=frozen_map)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Condition:
    """A standard Kubernetes condition."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None
    observed_generation: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Toleration:
    """A pod toleration; an absent operator means ``Equal`` (Kubernetes default)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FairSharing:
    """``spec.fairSharing``; ``weight`` defaults to 1 when the object is present."""

    weight: Quantity = field(default_factory=lambda: Quantity.from_units(1))


@dataclass(frozen=True, slots=True, kw_only=True)
class FairSharingStatus:
    weighted_share: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceUsage:
    """One resource of a ``FlavorUsage``; ``borrowed`` is the part above nominal."""

    name: ResourceName
    total: Quantity = field(default_factory=Quantity.zero)
    borrowed: Quantity = field(default_factory=Quantity.zero)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlavorUsage:
    name: FlavorName
    resources: tuple[ResourceUsage, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceQuota:
    """Quota of one resource in one flavor (docs/concepts.md#borrowing-and-lending-limits).

    ``nominal_quota`` is ``None`` only when the manifest omitted it, which
    validation rejects (CQ-15); a validated object always has it.
    ``borrowing_limit`` / ``lending_limit`` ``None`` mean "no limit".
    """

    name: ResourceName
    nominal_quota: Quantity | None = None
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FlavorQuotas:
    name: FlavorName
    resources: tuple[ResourceQuota, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceGroup:
    """Resources sharing one ordered flavor list (docs/concepts.md#resource-groups)."""

    covered_resources: tuple[ResourceName, ...] = ()
    flavors: tuple[FlavorQuotas, ...] = ()


__all__ = [
    "Condition",
    "FairSharing",
    "FairSharingStatus",
    "FlavorQuotas",
    "FlavorUsage",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ObjectMeta",
    "OwnerReference",
    "ResourceGroup",
    "ResourceQuota",
    "ResourceUsage",
    "Taint",
    "Toleration",
    "frozen_map",
]
