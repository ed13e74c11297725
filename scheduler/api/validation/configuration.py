"""Configuration file rules (docs/validation.md#configuration, docs/configuration.md).

The configuration is a file, not an API object; it is checked when a process
starts and by ``kuota validate``.  The few configuration defaults that the
rules depend on (docs/configuration.md#fields: the integrations list, the managed
namespace selector, kuota's namespace) are applied here, read-only, so that
"missing after defaulting" means the same thing as at start-up.

Types, unknown fields, and every value or range check that concerns one
field (enums, minimums, durations, label values: ``Check`` nodes) come from
the Configuration's description (``scheduler/api/config_fields.py``) and are
applied by :func:`_check_declared`; the functions below hold the rules that
relate several fields or lists.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from scheduler.api.config import DEFAULT_NAMESPACE, Integrations
from scheduler.api.config_fields import CHART_FRAMEWORKS, KNOWN_FRAMEWORKS
from scheduler.api.config_fields import CONFIGURATION as DESCRIPTION
from scheduler.api.crds.nodes import (
    AtLeast,
    GoDuration,
    LabelValue,
    Leaf,
    ListNode,
    MapNode,
    Node,
    NotActedOn,
    NotZero,
    ObjectNode,
    OffWhenDisabled,
    OneOf,
    OnlyWith,
    Refused,
)
from scheduler.api.feature_gates import KNOWN_FEATURE_GATES, REFUSED, enabled, judge
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.rule_text import LABEL_HINT
from scheduler.api.tls_options import cipher_problem
from scheduler.api.validation.common import in_rule_order, numbered, prepare
from scheduler.api.validation.formats import (
    as_dict,
    check_enum,
    check_selector,
    first_duplicates,
    is_dns1035_label,
    is_label_value,
    is_qualified_name,
    is_subdomain,
    mappings,
    negative,
    not_label_value,
    not_qualified_name,
    not_subdomain,
    required,
    selector_matches,
    strings,
)
from scheduler.api.validation.known_fields import CONFIGURATION

RULE_ORDER = [*numbered("CFG", 21), REFUSED]
DEFAULT_FRAMEWORKS: Final = list(Integrations().frameworks)
NAMESPACE_LABEL: Final = "kubernetes.io/metadata.name"
PREEMPTION_STRATEGY_LISTS: Final = (
    ["LessThanOrEqualToFinalShare"],
    ["LessThanInitialShare"],
    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
)
STRATEGY_HINT: Final = (
    "use [LessThanOrEqualToFinalShare], [LessThanInitialShare] or [LessThanOrEqualToFinalShare, "
    "LessThanInitialShare]"
)
_DURATION_RE = re.compile(r"([-+]?)((?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)")
_DURATION_PART_RE = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": Decimal("1e-9"),
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),
    "μs": Decimal("1e-6"),
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
}
_EXTERNAL_FRAMEWORK_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9]*\.[a-z0-9]+\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?"
)


def parse_duration(text: object) -> Decimal | None:
    """Seconds of a Go duration string (``1h30m``, ``-5s``, ``0``), None if not one: pure."""
    if not isinstance(text, str):
        return None
    if text in ("0", "+0", "-0"):
        return Decimal(0)
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        return None
    total = sum(
        (
            Decimal(number) * _UNIT_SECONDS[unit]
            for number, unit in _DURATION_PART_RE.findall(match.group(2))
        ),
        Decimal(0),
    )
    return -total if match.group(1) == "-" else total


def _err(errors: list[FieldError], path: FieldPath, message: str, rule: str) -> None:
    errors.append(error(path, message, origin="K", rule=rule))


def _number(value: object, node: Leaf) -> Decimal | int | float | None:
    """The number a checked leaf holds (a duration's seconds), or None: pure."""
    if node.type == "duration":
        return parse_duration(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if node.type == "number" or isinstance(value, int) else None


def _check_leaf(node: Leaf, value: object, path: FieldPath, errors: list[FieldError]) -> None:
    """The checks declared on one leaf, in their order."""
    number = _number(value, node)
    for check in node.checks:
        if isinstance(check, GoDuration) and number is None:
            message = f'"{value}" is not a valid duration (examples: 30s, 5m, 1h30m)'
            _err(errors, path, message, check.rule)
        elif isinstance(check, AtLeast) and number is not None:
            if number < check.minimum or (check.exclusive and number == check.minimum):
                _err(errors, path, check.message or negative(value), check.rule)
        elif isinstance(check, NotZero) and number is not None and number == 0:
            _err(errors, path, check.message, check.rule)
        elif isinstance(check, OneOf) and isinstance(value, str):
            if value or not node.empty_means_default:
                check_enum(value, node.values or (), path, errors, rule=check.rule, origin="K")
        elif isinstance(check, LabelValue) and isinstance(value, str):
            if not is_label_value(value):
                _err(errors, path, not_label_value(value), check.rule)


def _is_empty(value: object) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _check_acted_on(
    node: Node, value: object, path: FieldPath, errors: list[FieldError], warnings: list[str]
) -> None:
    """What kuota refuses (:class:`Refused`) or accepts without acting (:class:`NotActedOn`)."""
    for check in node.checks:
        if isinstance(check, Refused):
            if value in check.allowed or (_is_empty(value) and not check.even_empty):
                continue
            _err(errors, path, check.message, check.rule)
        elif isinstance(check, NotActedOn):
            if value in check.allowed or _is_empty(value):
                continue
            warnings.append(f"{path}: {check.message}")


def _check_declared(
    node: Node,
    value: object,
    parent: dict[str, Any],
    path: FieldPath,
    errors: list[FieldError],
    warnings: list[str],
) -> None:
    """Every check the description declares at or below ``node``, in description order.

    ``value`` is the cleaned value (``INVALID`` values are not numbers,
    strings or containers, so no check fires on them); ``parent`` is the
    object holding it, for :class:`OnlyWith`.  The fields kuota does not act
    on add to ``warnings``.
    """
    if isinstance(node, ObjectNode) and isinstance(value, dict):
        for check in node.checks:
            if isinstance(check, OffWhenDisabled) and value.get("enable") is False:
                return
            if isinstance(check, OnlyWith) and parent.get(check.sibling) != check.value:
                _err(errors, path, check.message, check.rule)
        _check_acted_on(node, value, path, errors, warnings)
        for name, child in node.properties.items():
            if name in value:
                _check_declared(child, value[name], value, path.child(name), errors, warnings)
        return
    if value is not None:
        _check_acted_on(node, value, path, errors, warnings)
    if isinstance(node, Leaf):
        if value is not None:
            _check_leaf(node, value, path, errors)
    elif isinstance(node, ListNode):
        for position, item in enumerate(value if isinstance(value, list) else ()):
            _check_declared(node.item, item, {}, path.index(position), errors, warnings)
    elif isinstance(node, MapNode):
        for key, item in (value if isinstance(value, dict) else {}).items():
            _check_declared(node.values, item, {}, path.key(key), errors, warnings)


def _check_integrations(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-1, CFG-3, CFG-4 (CFG-2, each name known, is declared)."""
    integrations = config.get("integrations", {"frameworks": DEFAULT_FRAMEWORKS})
    at = FieldPath(("integrations",))
    if not isinstance(integrations, dict):
        return
    frameworks = integrations.get("frameworks", DEFAULT_FRAMEWORKS)
    if frameworks == []:
        _err(
            errors,
            at.child("frameworks"),
            required("list at least one framework, e.g. batch/job"),
            "CFG-1",
        )
    for position, name, _ in first_duplicates(strings(frameworks)):
        _err(
            errors, at.child("frameworks").index(position), f'duplicate framework "{name}"', "CFG-3"
        )
    known = {name for _, name in strings(frameworks)}
    for position, name in strings(integrations.get("externalFrameworks")):
        here = at.child("externalFrameworks").index(position)
        if _EXTERNAL_FRAMEWORK_RE.fullmatch(name) is None:
            _err(
                errors,
                here,
                "must be written Kind.version.group, e.g. MyJob.v1.example.com",
                "CFG-4",
            )
        elif name in known:
            _err(errors, here, f'duplicate framework "{name}"', "CFG-4")
        known.add(name)


def _check_namespaces(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-5, CFG-6."""
    selector = config.get("managedJobsNamespaceSelector")
    at = FieldPath(("managedJobsNamespaceSelector",))
    check_selector(selector, at, errors, rule="CFG-5", origin="K")
    configured = config.get("namespace")
    namespace = configured if isinstance(configured, str) and configured else DEFAULT_NAMESPACE
    if isinstance(selector, dict):
        for excluded in dict.fromkeys(("kube-system", namespace)):
            if selector_matches(selector, {NAMESPACE_LABEL: excluded}):
                _err(errors, at, f'must not select the "{excluded}" namespace', "CFG-6")


def _check_fair_sharing(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-10, CFG-11 (CFG-12, admission fair sharing's values, is declared)."""
    fair = config.get("fairSharing")
    at = FieldPath(("fairSharing", "preemptionStrategies"))
    if isinstance(fair, dict) and fair.get("enable") is not False:
        strategies = fair.get("preemptionStrategies")
        if (strategies is None or strategies == []) and fair.get("enable") is not True:
            _err(errors, at, required(STRATEGY_HINT), "CFG-10")
        elif (
            isinstance(strategies, list)
            and strategies
            and strategies not in PREEMPTION_STRATEGY_LISTS
        ):
            listed = "[" + ", ".join(str(item) for item in strategies) + "]"
            _err(
                errors, at, f"unsupported list {listed}: {STRATEGY_HINT} (order matters)", "CFG-11"
            )


def _check_resources(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-14 and the combination of CFG-15 (the enums of CFG-13/15 are declared)."""
    resources = as_dict(config.get("resources"))
    at = FieldPath(("resources",))
    inputs: set[str] = set()
    for position, transformation in mappings(resources.get("transformations")):
        here = at.child("transformations").index(position)
        source = transformation.get("input")
        if source is None or source == "":
            _err(errors, here.child("input"), required("name the resource to transform"), "CFG-14")
        elif isinstance(source, str):
            if source in inputs:
                _err(
                    errors,
                    here.child("input"),
                    f'duplicate transformation input "{source}"',
                    "CFG-14",
                )
            inputs.add(source)
    strategy = resources.get("quotaCheckStrategy")
    if strategy == "IgnoreUndeclared" and strings(resources.get("excludeResourcePrefixes")):
        _err(
            errors,
            at.child("quotaCheckStrategy"),
            "excludeResourcePrefixes cannot be used with IgnoreUndeclared",
            "CFG-15",
        )


def _check_certs_and_gates(
    config: dict[str, Any], errors: list[FieldError], command_line_gates: bool
) -> None:
    """CFG-18, CFG-19."""
    certs = as_dict(config.get("internalCertManagement"))
    at = FieldPath(("internalCertManagement",))
    if certs.get("enable", True) is not False:
        service, secret = certs.get("webhookServiceName"), certs.get("webhookSecretName")
        if isinstance(service, str) and not is_dns1035_label(service):
            _err(
                errors,
                at.child("webhookServiceName"),
                f'"{service}" is not a valid service name: {LABEL_HINT}, starting with a letter',
                "CFG-18",
            )
        if isinstance(secret, str) and not is_subdomain(secret):
            _err(
                errors,
                at.child("webhookSecretName"),
                not_subdomain(secret, "Secret name"),
                "CFG-18",
            )
    gates = config.get("featureGates")
    if isinstance(gates, dict):
        for name in gates:
            if name not in KNOWN_FEATURE_GATES:
                _err(
                    errors, FieldPath(("featureGates",)), f'unknown feature gate "{name}"', "CFG-19"
                )
        if command_line_gates and gates:
            _err(
                errors,
                FieldPath(("featureGates",)),
                "set feature gates either on the command line or in the file, not both",
                "CFG-19",
            )


def _check_kuota(config: dict[str, Any], errors: list[FieldError], warnings: list[str]) -> None:
    """What kuota refuses or does not act on, beyond the declared fields (CFG-K)."""
    integrations = as_dict(config.get("integrations"))
    frameworks = integrations.get("frameworks", DEFAULT_FRAMEWORKS)
    for position, name in strings(frameworks):
        if name in KNOWN_FRAMEWORKS and name not in CHART_FRAMEWORKS:
            warnings.append(
                f"integrations.frameworks[{position}]: kuota does not manage {name}: its "
                "objects are neither suspended nor queued (they run without quota)"
            )
    gates = config.get("featureGates")
    if isinstance(gates, dict):
        gate_errors, gate_warnings = judge(gates)
        errors.extend(gate_errors)
        warnings.extend(gate_warnings)
    tls = as_dict(config.get("tls"))
    for position, name in strings(tls.get("cipherSuites")):
        problem = cipher_problem(name)
        if problem is not None:
            _err(errors, FieldPath(("tls", "cipherSuites")).index(position), problem, REFUSED)
    if as_dict(config.get("metrics")).get("customLabels") and not enabled(
        gates if isinstance(gates, dict) else {}, "CustomMetricLabels"
    ):
        warnings.append(
            "metrics.customLabels: the CustomMetricLabels feature gate is off: the labels "
            "have no effect (as in Kueue)"
        )
    if tls and isinstance(gates, dict) and gates.get("TLSOptions") is False:
        warnings.append("tls: the TLSOptions feature gate is off: the section has no effect")
    _check_lease_timings(as_dict(config.get("leaderElection")), errors)
    _check_visibility_server(as_dict(config.get("visibilityServer")), errors)


def _check_visibility_server(section: dict[str, Any], errors: list[FieldError]) -> None:
    """Where the visibility API listens: an IP address and a port, as Kueue checks them."""
    at = FieldPath(("visibilityServer",))
    address = section.get("bindAddress")
    if isinstance(address, str):
        try:
            ipaddress.ip_address(address)
        except ValueError:
            _err(errors, at.child("bindAddress"), "must be a valid IP address", REFUSED)
    port = section.get("bindPort")
    if isinstance(port, int) and not isinstance(port, bool) and port > 65535:
        _err(errors, at.child("bindPort"), "must be a valid port number (1-65535)", REFUSED)


LEASE_DEFAULTS: Final = {"leaseDuration": 15, "renewDeadline": 10, "retryPeriod": 2}
"""Seconds: Kueue's (component-base's) defaults of the three leader-election durations."""


def _check_lease_timings(section: dict[str, Any], errors: list[FieldError]) -> None:
    """The leader-election durations the file sets, against each other (with the defaults)."""
    given = {name: parse_duration(section.get(name)) for name in LEASE_DEFAULTS}
    if not any(name in section for name in LEASE_DEFAULTS) or any(
        name in section and value is None for name, value in given.items()
    ):
        return
    lease, renew, retry = (
        given[name] if given[name] is not None else Decimal(LEASE_DEFAULTS[name])
        for name in LEASE_DEFAULTS
    )
    at = FieldPath(("leaderElection",))
    assert lease is not None and renew is not None and retry is not None
    if renew >= lease:
        _err(
            errors,
            at.child("renewDeadline"),
            f"must be less than leaseDuration ({lease}s): the gap bounds each write",
            REFUSED,
        )
    elif renew <= Decimal("1.2") * retry:
        _err(
            errors,
            at.child("renewDeadline"),
            f"must be more than 1.2 x retryPeriod ({retry}s)",
            REFUSED,
        )


CUSTOM_LABEL_NAME: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")
CUSTOM_LABELS_LIMIT: Final = 20
CUSTOM_LABELS_PER_KIND: Final = {"ClusterQueue": 6, "Cohort": 6, "LocalQueue": 6, "Workload": 2}
TRACKED_VALUES_LIMIT: Final = 16
WORKLOAD_TRACKED_VALUES_LIMIT: Final = 12


def _check_custom_labels(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-21: ``metrics.customLabels``, as Kueue checks them (docs/metrics.md#custom-labels)."""
    at = FieldPath(("metrics", "customLabels"))
    entries = list(mappings(as_dict(config.get("metrics")).get("customLabels")))
    if len(entries) > CUSTOM_LABELS_LIMIT:
        _err(errors, at, f"must have at most {CUSTOM_LABELS_LIMIT} items", "CFG-21")
    seen: set[str] = set()
    per_kind: dict[str, int] = {}
    for position, entry in entries:
        here = at.index(position)
        name = entry.get("name")
        if isinstance(name, str):
            if CUSTOM_LABEL_NAME.fullmatch(name) is None:
                _err(errors, here.child("name"), "must match ^[a-zA-Z][a-zA-Z0-9_]*$", "CFG-21")
            if name in seen:
                _err(errors, here.child("name"), f'duplicate name "{name}"', "CFG-21")
            seen.add(name)
        label_key, annotation_key = entry.get("sourceLabelKey"), entry.get("sourceAnnotationKey")
        if label_key and annotation_key:
            message = "sourceLabelKey and sourceAnnotationKey are mutually exclusive"
            _err(errors, here, message, "CFG-21")
        source, key = (
            ("sourceAnnotationKey", annotation_key)
            if annotation_key
            else ("sourceLabelKey", label_key)
            if label_key
            else ("name", name)
        )
        if isinstance(key, str) and not is_qualified_name(key):
            _err(errors, here.child(source), not_qualified_name(key, "label key"), "CFG-21")
        kind = entry.get("sourceKind") or "ClusterQueue"
        per_kind[str(kind)] = per_kind.get(str(kind), 0) + 1
        tracked = list(strings(entry.get("trackedValues")))
        values = [value for _, value in tracked]
        if kind == "Workload" and not values:
            message = "must not be empty when sourceKind is 'Workload'"
            _err(errors, here.child("trackedValues"), message, "CFG-21")
        limit = WORKLOAD_TRACKED_VALUES_LIMIT if kind == "Workload" else TRACKED_VALUES_LIMIT
        if len(values) > limit:
            message = f"must have at most {limit} items"
            if kind == "Workload":
                message += " when sourceKind is 'Workload'"
            _err(errors, here.child("trackedValues"), message, "CFG-21")
        if len(set(values)) < len(values):
            _err(errors, here.child("trackedValues"), "must not contain duplicates", "CFG-21")
    for kind, count in sorted(per_kind.items()):
        most = CUSTOM_LABELS_PER_KIND.get(kind)
        if most is not None and count > most:
            message = f"too many custom labels for source kind {kind}: found {count}, "
            _err(errors, at, message + f"expected <= {most}", "CFG-21")


def check_configuration(
    new: Mapping[str, Any], *, command_line_gates: bool = False
) -> tuple[list[FieldError], list[str]]:
    """Every configuration rule, and kuota's (CFG-K), on a v1beta2 Configuration: pure.

    Returns the violations, in rule order, and the warnings: one line per
    field that kuota accepts and does not act on (``<path>: <what kuota
    does>``), in the order of the file.  Never raises.
    """
    errors: list[FieldError] = []
    warnings: list[str] = []
    config = prepare(new, CONFIGURATION, errors)
    if config is None:
        return errors, warnings
    errors = [
        error(item.field, item.message, origin="K", rule="CFG-20")
        if item.rule == "UNKNOWN-FIELD"
        else item
        for item in errors
    ]
    # The declared checks first: within one rule they come before the written ones.
    _check_declared(DESCRIPTION, config, {}, FieldPath(), errors, warnings)
    _check_integrations(config, errors)
    _check_namespaces(config, errors)
    _check_fair_sharing(config, errors)
    _check_resources(config, errors)
    _check_certs_and_gates(config, errors, command_line_gates)
    _check_custom_labels(config, errors)
    _check_kuota(config, errors, warnings)
    return in_rule_order(errors, RULE_ORDER), warnings


def validate_configuration(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    command_line_gates: bool = False,
) -> list[FieldError]:
    """The violations of :func:`check_configuration` (the validator of the pipeline): pure.

    ``command_line_gates`` says whether feature gates were also given on the
    command line (CFG-19).
    """
    return check_configuration(new, command_line_gates=command_line_gates)[0]
