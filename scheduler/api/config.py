"""The Kueue ``Configuration`` file (``config.kueue.x-k8s.io/v1beta2``, docs/configuration.md).

A file, not an API object: read once at start-up (scheduler, webhook) or per
run (``kuota simulate``).  Only the fields that change scheduling are typed
in full; the operational sections (``webhook``, ``metrics``, ``health``,
``leaderElection``, …) are kept as raw read-only maps so a Kueue
configuration loads unchanged.  Defaults are Kueue's v1beta2 defaults,
including ``waitForPodsReady`` being present (docs/configuration.md#waitforpodsready).

Unknown top-level fields are errors (docs/api-differences.md#kuota-decisions), with one
tolerated exception: ``fairSharing.enable`` from v1beta1 (docs/configuration.md#versions) is
read and reported in ``Configuration.warnings``.

The fields are described once, in ``config_fields.py``: each typed field
below is read through its node (``scheduler.api.parse.binding``, which
checks at import that the dataclasses and the description agree), the
sections kept raw are the described ones no dataclass types, and the
top-level names accepted are the described ones.  What is written here is
what the description cannot say: Kueue's defaults (on the dataclasses) and
the defaults that depend on other fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from typing import Any

from scheduler.api.config_fields import CONFIGURATION as DESCRIPTION
from scheduler.api.crds.nodes import ObjectNode
from scheduler.api.field import FieldPath
from scheduler.api.models.common import (
    KEEPS_EMPTY,
    LabelSelector,
    LabelSelectorRequirement,
    frozen_map,
    read_from,
)
from scheduler.api.parse.binding import Build, Read, bind, camel, field_reader
from scheduler.api.parse.reader import Reader, describe
from scheduler.api.parse.reader import parse_duration as parse_duration
from scheduler.api.quantity import Quantity
from scheduler.api.refs import CONFIG_V1BETA2 as API_VERSION
from scheduler.api.refs import (
    FAIR_SHARING_PREEMPTION_STRATEGIES,
    FairSharingPreemptionStrategy,
    QuotaCheckStrategy,
    RequeuingTimestamp,
)

DEFAULT_NAMESPACE = "kueue-system"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequeuingStrategy:
    timestamp: RequeuingTimestamp = "Eviction"
    backoff_limit_count: int | None = None
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitForPodsReady:
    timeout: timedelta = timedelta(minutes=30)
    block_admission: bool = False
    recovery_timeout: timedelta | None = None
    """Defaults to ``timeout`` (the parser fills it in)."""
    requeuing_strategy: RequeuingStrategy = field(default_factory=RequeuingStrategy)


@dataclass(frozen=True, slots=True, kw_only=True)
class Integrations:
    frameworks: tuple[str, ...] = ("batch/job",)
    external_frameworks: tuple[str, ...] = ()
    label_keys_to_copy: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FairSharingConfig:
    preemption_strategies: tuple[FairSharingPreemptionStrategy, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionFairSharing:
    usage_half_life_time: timedelta | None = None
    usage_sampling_interval: timedelta = timedelta(minutes=5)
    resource_weights: Mapping[str, float] = field(default_factory=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceTransformation:
    input: str = ""
    strategy: str = "Retain"
    multiply_by: str | None = field(default=None, metadata=KEEPS_EMPTY)
    outputs: Mapping[str, Quantity] = field(default_factory=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcesConfig:
    exclude_resource_prefixes: tuple[str, ...] = ()
    transformations: tuple[ResourceTransformation, ...] = ()
    quota_check_strategy: QuotaCheckStrategy | None = None
    """Absent behaves as ``BlockUndeclared``."""
    device_class_mappings: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectRetentionPolicies:
    after_finished: timedelta | None = field(
        default=None, metadata=read_from("workloads", "afterFinished")
    )
    after_deactivated_by_kueue: timedelta | None = field(
        default=None, metadata=read_from("workloads", "afterDeactivatedByKueue")
    )


def default_managed_jobs_namespace_selector(namespace: str) -> LabelSelector:
    """Kueue's default: every namespace but ``kube-system`` and Kueue's own: pure."""
    return LabelSelector(
        match_expressions=(
            LabelSelectorRequirement(
                key="kubernetes.io/metadata.name",
                operator="NotIn",
                values=("kube-system", namespace),
            ),
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Configuration:
    kind: str = "Configuration"
    api_version: str = API_VERSION
    namespace: str = DEFAULT_NAMESPACE
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: LabelSelector = field(
        default_factory=lambda: default_managed_jobs_namespace_selector(DEFAULT_NAMESPACE)
    )
    wait_for_pods_ready: WaitForPodsReady | None = field(default_factory=WaitForPodsReady)
    integrations: Integrations = field(default_factory=Integrations)
    fair_sharing: FairSharingConfig | None = None
    """``None``: classical preemption only (docs/configuration.md#fairsharing)."""
    admission_fair_sharing: AdmissionFairSharing | None = None
    resources: ResourcesConfig | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=frozen_map)
    object_retention_policies: ObjectRetentionPolicies | None = None
    operational: Mapping[str, Any] = field(default_factory=frozen_map)
    """Sections without scheduling effect (multiKueue, webhook, metrics, health, …), raw."""
    warnings: tuple[str, ...] = ()


def _section(name: str) -> ObjectNode:
    node = DESCRIPTION.properties[name]
    assert isinstance(node, ObjectNode)
    return node


def _field(name: str) -> Read:
    return field_reader(Configuration, name, DESCRIPTION, custom={})


# Each typed field is read as its description says (binding checks the two agree).
_NAMESPACE = _field("namespace")
_MANAGE_JOBS = _field("manage_jobs_without_queue_name")
_INTEGRATIONS = _field("integrations")
_ADMISSION_FAIR_SHARING = _field("admission_fair_sharing")
_RESOURCES = _field("resources")
_FEATURE_GATES = _field("feature_gates")
_RETENTION = _field("object_retention_policies")
# Read by hand below, for defaults or v1beta1 leftovers of their own.
_SELECTOR: Build = bind(LabelSelector, _section("managedJobsNamespaceSelector"), custom={})
_WAIT_FOR_PODS_READY: Build = bind(WaitForPodsReady, _section("waitForPodsReady"), custom={})
_FAIR_SHARING: Build = bind(FairSharingConfig, _section("fairSharing"), custom={})

_KEPT = [name for name, node in DESCRIPTION.properties.items() if node.read]
"""Top-level fields the Configuration keeps; any other is an error but ``metadata``."""
_IDENTITY = ("metadata",)
"""Read by validation (the name a report shows), not a setting: neither kept nor refused."""
_TYPED = {camel(item.name) for item in fields(Configuration)} & set(_KEPT)
_OPERATIONAL = tuple(name for name in _KEPT if name not in _TYPED)
"""Described sections the Configuration keeps raw (multiKueue, webhook, metrics, …)."""


def _fair_sharing(
    reader: Reader, raw: Mapping[str, Any], path: FieldPath, warnings: list[str]
) -> FairSharingConfig | None:
    section = reader.object(raw, "fairSharing", path)
    if section is None:
        return None
    here = path.child("fairSharing")
    fair: FairSharingConfig = _FAIR_SHARING(reader, section, here)
    if "enable" in section:
        enable = reader.boolean(section, "enable", here)
        warnings.append(
            "fairSharing.enable belongs to config.kueue.x-k8s.io/v1beta1; in v1beta2 the presence "
            "of fairSharing enables it"
        )
        if enable is False:
            return None
        if enable and not fair.preemption_strategies:
            fair = replace(fair, preemption_strategies=FAIR_SHARING_PREEMPTION_STRATEGIES)
    for key in section:
        if key not in _section("fairSharing").properties:
            reader.fail(here.child(key), f'unknown field "{key}"', rule="CFG-UNKNOWN")
    return fair


def build_configuration(reader: Reader, raw: Mapping[str, Any]) -> Configuration:
    """Read a v1beta2 Configuration with Kueue's defaults (errors go to ``reader``)."""
    root = FieldPath()
    warnings: list[str] = []
    for key in raw:
        if key not in _KEPT and key not in _IDENTITY:
            hint = " (queueVisibility was removed in v1beta2)" if key == "queueVisibility" else ""
            reader.fail(root.child(key), f'unknown field "{key}"{hint}', rule="CFG-UNKNOWN")
    namespace: str = _NAMESPACE(reader, raw, root)
    selector_raw = reader.object(raw, "managedJobsNamespaceSelector", root)
    selector = (
        default_managed_jobs_namespace_selector(namespace)
        if selector_raw is None
        else _SELECTOR(reader, selector_raw, root.child("managedJobsNamespaceSelector"))
    )
    integrations = _INTEGRATIONS(reader, raw, root)
    gates = _FEATURE_GATES(reader, raw, root)
    retention = _RETENTION(reader, raw, root)
    manage_jobs = _MANAGE_JOBS(reader, raw, root)
    wait: WaitForPodsReady = _WAIT_FOR_PODS_READY(
        reader, reader.object(raw, "waitForPodsReady", root) or {}, root.child("waitForPodsReady")
    )
    if wait.recovery_timeout is None:
        wait = replace(wait, recovery_timeout=wait.timeout)
    return Configuration(
        namespace=namespace,
        manage_jobs_without_queue_name=manage_jobs,
        managed_jobs_namespace_selector=selector,
        wait_for_pods_ready=wait,
        integrations=integrations,
        fair_sharing=_fair_sharing(reader, raw, root, warnings),
        admission_fair_sharing=_ADMISSION_FAIR_SHARING(reader, raw, root),
        resources=_RESOURCES(reader, raw, root),
        feature_gates=gates,
        object_retention_policies=retention,
        operational=frozen_map({key: raw[key] for key in _OPERATIONAL if key in raw}),
        warnings=tuple(warnings),
    )


def parse_configuration(raw: object) -> Configuration:
    """Parse a ``config.kueue.x-k8s.io/v1beta2`` Configuration: pure.

    Raises ``ObjectParseError``.
    """
    from scheduler.api.parse import ObjectParseError

    reader = Reader()
    if not isinstance(raw, Mapping):
        reader.fail(FieldPath(), f"a Configuration must be an object, not {describe(raw)}")
        raise ObjectParseError(reader.errors)
    config = build_configuration(reader, reader.as_object(raw, FieldPath()) or {})
    if reader.errors:
        raise ObjectParseError(reader.errors, config)
    return config
