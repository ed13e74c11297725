"""The Kueue ``Configuration`` file (``config.kueue.x-k8s.io/v1beta2``, api.md 12).

A file, not an API object: read once at start-up (scheduler, webhook) or per
run (``kuota simulate``).  Only the fields that change scheduling are typed
in full; the operational sections (``webhook``, ``metrics``, ``health``,
``leaderElection``, …) are kept as raw read-only maps so a Kueue
configuration loads unchanged.  Defaults are Kueue's v1beta2 defaults,
including ``waitForPodsReady`` being present (api.md 12.3).

Unknown top-level fields are errors (api.md 12, kuota decision), with one
tolerated exception: ``fairSharing.enable`` from v1beta1 (api.md 12.4) is
read and reported in ``Configuration.warnings``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from scheduler.api.crds.schema_kit import label_selector
from scheduler.api.field import FieldPath
from scheduler.api.models.common import LabelSelector, LabelSelectorRequirement, frozen_map
from scheduler.api.parse.binding import bind
from scheduler.api.parse.reader import Reader, describe, spelled
from scheduler.api.quantity import Quantity
from scheduler.api.refs import CONFIG_V1BETA2 as API_VERSION
from scheduler.api.refs import FairSharingPreemptionStrategy, QuotaCheckStrategy, RequeuingTimestamp

DEFAULT_NAMESPACE = "kueue-system"

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> timedelta | None:
    """A Go duration (``30m``, ``1h30m``, ``1.5h``, ``300ms``, ``0``) → ``timedelta``;
    ``None`` if invalid: pure.
    """
    body = text
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return timedelta(0)
    if not body:
        return None
    seconds = 0.0
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None or match.group(1) in ("", "."):
            return None
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    return timedelta(seconds=sign * seconds)


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
    multiply_by: str | None = None
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
    after_finished: timedelta | None = None
    after_deactivated_by_kueue: timedelta | None = None


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
    """``None``: classical preemption only (api.md 12.4)."""
    admission_fair_sharing: AdmissionFairSharing | None = None
    resources: ResourcesConfig | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=frozen_map)
    object_retention_policies: ObjectRetentionPolicies | None = None
    operational: Mapping[str, Any] = field(default_factory=frozen_map)
    """Sections without scheduling effect (multiKueue, webhook, metrics, health, …), raw."""
    warnings: tuple[str, ...] = ()


_OPERATIONAL_SECTIONS = (
    "multiKueue",
    "webhook",
    "metrics",
    "health",
    "leaderElection",
    "clientConnection",
    "internalCertManagement",
    "controller",
    "pprofBindAddress",
    "tls",
    "visibilityServer",
)
_TYPED_SECTIONS = (
    "apiVersion",
    "kind",
    "namespace",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "waitForPodsReady",
    "integrations",
    "fairSharing",
    "admissionFairSharing",
    "resources",
    "featureGates",
    "objectRetentionPolicies",
)


_SELECTOR = bind(LabelSelector, label_selector(), custom={})


def _duration(
    reader: Reader, raw: Mapping[str, Any], key: str, path: FieldPath
) -> timedelta | None:
    value = raw.get(key)
    if value is None:
        return None
    parsed = parse_duration(value) if isinstance(value, str) else None
    if parsed is None:
        reader.fail(
            path.child(key),
            f'"{spelled(value)}" is not a valid duration: use e.g. 30s, 5m or 1h30m',
        )
    return parsed


def _wait_for_pods_ready(
    reader: Reader, raw: Mapping[str, Any], path: FieldPath
) -> WaitForPodsReady:
    here = path.child("waitForPodsReady")
    section = reader.object(raw, "waitForPodsReady", path) or {}
    strategy = reader.object(section, "requeuingStrategy", here) or {}
    strategy_path = here.child("requeuingStrategy")
    timeout = _duration(reader, section, "timeout", here) or timedelta(minutes=30)
    recovery = _duration(reader, section, "recoveryTimeout", here)
    base = reader.integer(strategy, "backoffBaseSeconds", strategy_path)
    most = reader.integer(strategy, "backoffMaxSeconds", strategy_path)
    return WaitForPodsReady(
        timeout=timeout,
        block_admission=bool(reader.boolean(section, "blockAdmission", here)),
        recovery_timeout=timeout if recovery is None else recovery,
        requeuing_strategy=RequeuingStrategy(
            timestamp=reader.enum(strategy, "timestamp", strategy_path, "Eviction"),
            backoff_limit_count=reader.integer(strategy, "backoffLimitCount", strategy_path),
            backoff_base_seconds=60 if base is None else base,
            backoff_max_seconds=3600 if most is None else most,
        ),
    )


def _fair_sharing(
    reader: Reader, raw: Mapping[str, Any], path: FieldPath, warnings: list[str]
) -> FairSharingConfig | None:
    section = reader.object(raw, "fairSharing", path)
    if section is None:
        return None
    here = path.child("fairSharing")
    strategies = reader.strings(section, "preemptionStrategies", here)
    if "enable" in section:
        enable = reader.boolean(section, "enable", here)
        warnings.append(
            "fairSharing.enable belongs to config.kueue.x-k8s.io/v1beta1; in v1beta2 the presence "
            "of fairSharing enables it"
        )
        if enable is False:
            return None
        if enable and not strategies:
            strategies = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    for key in section:
        if key not in ("preemptionStrategies", "enable"):
            reader.fail(here.child(key), f'unknown field "{key}"', rule="CFG-UNKNOWN")
    return FairSharingConfig(preemption_strategies=strategies)  # type: ignore[arg-type]


def _resources(reader: Reader, raw: Mapping[str, Any], path: FieldPath) -> ResourcesConfig | None:
    section = reader.object(raw, "resources", path)
    if section is None:
        return None
    here = path.child("resources")

    def transformation(item: Mapping[str, Any], item_path: FieldPath) -> ResourceTransformation:
        return ResourceTransformation(
            input=reader.text(item, "input", item_path),
            strategy=reader.enum(item, "strategy", item_path, "Retain"),
            multiply_by=reader.string(item, "multiplyBy", item_path),
            outputs=frozen_map(reader.quantity_map(item, "outputs", item_path)),
        )

    strategy = reader.string(section, "quotaCheckStrategy", here)
    mappings = [item for item, _ in reader.items(section, "deviceClassMappings", here)]
    return ResourcesConfig(
        exclude_resource_prefixes=reader.strings(section, "excludeResourcePrefixes", here),
        transformations=reader.objects(section, "transformations", here, transformation),
        quota_check_strategy=strategy or None,  # type: ignore[arg-type]
        device_class_mappings=tuple(mappings),
    )


def _admission_fair_sharing(
    reader: Reader, raw: Mapping[str, Any], path: FieldPath
) -> AdmissionFairSharing | None:
    section = reader.object(raw, "admissionFairSharing", path)
    if section is None:
        return None
    here = path.child("admissionFairSharing")
    weights: dict[str, float] = {}
    for name, value in (reader.object(section, "resourceWeights", here) or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            weights[name] = float(value)
        else:
            reader.wrong_type(here.child("resourceWeights").key(name), "a number", value)
    return AdmissionFairSharing(
        usage_half_life_time=_duration(reader, section, "usageHalfLifeTime", here),
        usage_sampling_interval=_duration(reader, section, "usageSamplingInterval", here)
        or timedelta(minutes=5),
        resource_weights=frozen_map(weights),
    )


def build_configuration(reader: Reader, raw: Mapping[str, Any]) -> Configuration:
    """Read a v1beta2 Configuration with Kueue's defaults (errors go to ``reader``)."""
    root = FieldPath()
    warnings: list[str] = []
    for key in raw:
        if key not in _TYPED_SECTIONS and key not in _OPERATIONAL_SECTIONS:
            hint = " (queueVisibility was removed in v1beta2)" if key == "queueVisibility" else ""
            reader.fail(root.child(key), f'unknown field "{key}"{hint}', rule="CFG-UNKNOWN")
    namespace = reader.string(raw, "namespace", root) or DEFAULT_NAMESPACE
    selector_raw = reader.object(raw, "managedJobsNamespaceSelector", root)
    selector = (
        None
        if selector_raw is None
        else _SELECTOR(reader, selector_raw, root.child("managedJobsNamespaceSelector"))
    )
    integrations_raw = reader.object(raw, "integrations", root) or {}
    integrations_path = root.child("integrations")
    frameworks = reader.strings(integrations_raw, "frameworks", integrations_path)
    gates: dict[str, bool] = {}
    for name, value in (reader.object(raw, "featureGates", root) or {}).items():
        if isinstance(value, bool):
            gates[name] = value
        else:
            reader.fail(
                root.child("featureGates").key(name),
                f"must be true or false, not {describe(value)}",
            )
    retention_raw = reader.object(raw, "objectRetentionPolicies", root)
    retention = None
    if retention_raw is not None:
        retention_path = root.child("objectRetentionPolicies")
        workloads = reader.object(retention_raw, "workloads", retention_path) or {}
        workloads_path = retention_path.child("workloads")
        retention = ObjectRetentionPolicies(
            after_finished=_duration(reader, workloads, "afterFinished", workloads_path),
            after_deactivated_by_kueue=_duration(
                reader, workloads, "afterDeactivatedByKueue", workloads_path
            ),
        )
    return Configuration(
        namespace=namespace,
        manage_jobs_without_queue_name=bool(
            reader.boolean(raw, "manageJobsWithoutQueueName", root)
        ),
        managed_jobs_namespace_selector=selector
        or default_managed_jobs_namespace_selector(namespace),
        wait_for_pods_ready=_wait_for_pods_ready(reader, raw, root),
        integrations=Integrations(
            frameworks=frameworks or ("batch/job",),
            external_frameworks=reader.strings(
                integrations_raw, "externalFrameworks", integrations_path
            ),
            label_keys_to_copy=reader.strings(
                integrations_raw, "labelKeysToCopy", integrations_path
            ),
        ),
        fair_sharing=_fair_sharing(reader, raw, root, warnings),
        admission_fair_sharing=_admission_fair_sharing(reader, raw, root),
        resources=_resources(reader, raw, root),
        feature_gates=frozen_map(gates),
        object_retention_policies=retention,
        operational=frozen_map({key: raw[key] for key in _OPERATIONAL_SECTIONS if key in raw}),
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
