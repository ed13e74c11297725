"""Configuration file rules (validation.md section 13, api.md section 12).

The configuration is a file, not an API object; it is checked when a process
starts and by ``kuota validate``.  The few configuration defaults that the
rules depend on (api.md 12.1/12.3/12.6: the integrations list, the managed
namespace selector, kuota's namespace) are applied here, read-only, so that
"missing after defaulting" means the same thing as at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.refs import MULTIKUEUE_INCREMENTAL_DISPATCHER as INCREMENTAL_DISPATCHER
from scheduler.api.validation.common import in_rule_order, numbered, prepare
from scheduler.api.validation.formats import (
    LABEL_HINT,
    as_dict,
    check_enum,
    check_selector,
    first_duplicates,
    is_dns1035_label,
    is_label_value,
    is_subdomain,
    mappings,
    negative,
    not_label_value,
    not_subdomain,
    required,
    selector_matches,
    strings,
    unsupported,
)
from scheduler.api.validation.known_fields import CONFIGURATION

RULE_ORDER = numbered("CFG", 20)
DEFAULT_NAMESPACE: Final = "kueue-system"
DEFAULT_FRAMEWORKS: Final = ["batch/job"]
NAMESPACE_LABEL: Final = "kubernetes.io/metadata.name"
KNOWN_FRAMEWORKS: Final = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/mpijob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
KNOWN_FEATURE_GATES: Final = frozenset(
    {
        # named by kuota's specs
        "AdmissionFairSharing",
        "AdmissionGatedBy",
        "ConcurrentAdmission",
        "DisableWaitForPodsReady",
        "ManagedJobsNamespaceSelectorAlwaysRespected",
        "PartialAdmission",
        "PriorityBoost",
        "QuotaCheckStrategy",
        "RejectUpdatesToCQWithInvalidOnFlavors",
        "WorkloadPriorityClassDefaulting",
        "WorkloadValidateResourcesAreNonNegative",
        "WorkloadValidationForPodSetMetadata",
        "UnadmittedWorkloadsObservability",
        "ElasticJobsViaWorkloadSlices",
        # other Kueue gates a Kueue configuration file may carry (kuota accepts and ignores them)
        "FlavorFungibility",
        "ProvisioningACC",
        "VisibilityOnDemand",
        "PrioritySortingWithinCohort",
        "MultiKueue",
        "LendingLimit",
        "MultiKueueBatchJobWithManagedBy",
        "MultiplePreemptions",
        "TopologyAwareScheduling",
        "ConfigurableResourceTransformations",
        "WorkloadResourceRequestsSummary",
        "ExposeFlavorsInLocalQueue",
        "AdmissionCheckValidationRules",
        "KeepQuotaForProvReqRetry",
        "ManagedJobsNamespaceSelector",
        "LocalQueueDefaulting",
        "LocalQueueMetrics",
        "TASProfileMostFreeCapacity",
        "TASProfileLeastFreeCapacity",
        "TASProfileMixed",
        "HierarchicalCohorts",
        "ObjectRetentionPolicies",
        "TASFailedNodeReplacement",
        "TASFailedNodeReplacementFailFast",
        "TASReplaceNodeOnPodTermination",
        "TASBalancedPlacement",
        "FlavorFungibilityImplicitPreferenceDefault",
        "WorkloadRequestUseMergePatch",
        "SanitizePodSets",
        "MultiKueueAllowInsecureKubeconfigs",
        "ReclaimablePods",
        "PropagateBatchJobLabelsToWorkload",
        "MultiKueueClusterProfile",
        "FailureRecoveryPolicy",
        "DynamicResourceAllocation",
        "QueueVisibility",
    }
)
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


def _duration(
    value: object, path: FieldPath, errors: list[FieldError], rule: str
) -> Decimal | None:
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds is None:
        errors.append(
            error(
                path,
                f'"{value}" is not a valid duration (examples: 30s, 5m, 1h30m)',
                origin="K",
                rule=rule,
            )
        )
    return seconds


def _err(errors: list[FieldError], path: FieldPath, message: str, rule: str) -> None:
    errors.append(error(path, message, origin="K", rule=rule))


def _check_integrations(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-1 … CFG-4."""
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
    for position, name in strings(frameworks):
        if name not in KNOWN_FRAMEWORKS:
            _err(
                errors,
                at.child("frameworks").index(position),
                unsupported(name, KNOWN_FRAMEWORKS),
                "CFG-2",
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


def _check_wait_for_pods_ready(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-7 … CFG-9."""
    wait = config.get("waitForPodsReady")
    if not isinstance(wait, dict) or wait.get("enable") is False:
        return
    at = FieldPath(("waitForPodsReady",))
    timeout = _duration(wait.get("timeout"), at.child("timeout"), errors, "CFG-8")
    if timeout is not None and timeout == 0:
        _err(
            errors, at.child("timeout"), required("give a timeout greater than 0, e.g. 5m"), "CFG-7"
        )
    if timeout is not None and timeout < 0:
        _err(errors, at.child("timeout"), negative(wait.get("timeout")), "CFG-8")
    recovery = _duration(wait.get("recoveryTimeout"), at.child("recoveryTimeout"), errors, "CFG-8")
    if recovery is not None and recovery < 0:
        _err(errors, at.child("recoveryTimeout"), negative(wait.get("recoveryTimeout")), "CFG-8")
    strategy = as_dict(wait.get("requeuingStrategy"))
    for field in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"):
        value = strategy.get(field)
        if isinstance(value, int) and value < 0:
            _err(errors, at.child("requeuingStrategy", field), negative(value), "CFG-8")
    check_enum(
        strategy.get("timestamp"),
        ("Eviction", "Creation"),
        at.child("requeuingStrategy", "timestamp"),
        errors,
        rule="CFG-9",
        origin="K",
    )


def _check_fair_sharing(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-10 … CFG-12."""
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
    admission = config.get("admissionFairSharing")
    if isinstance(admission, dict):
        here = FieldPath(("admissionFairSharing",))
        half_life = _duration(
            admission.get("usageHalfLifeTime"), here.child("usageHalfLifeTime"), errors, "CFG-12"
        )
        if half_life is not None and half_life < 0:
            _err(
                errors,
                here.child("usageHalfLifeTime"),
                negative(admission.get("usageHalfLifeTime")),
                "CFG-12",
            )
        interval = _duration(
            admission.get("usageSamplingInterval"),
            here.child("usageSamplingInterval"),
            errors,
            "CFG-12",
        )
        if interval is not None and interval <= 0:
            _err(errors, here.child("usageSamplingInterval"), "must be greater than 0", "CFG-12")
        for resource, weight in as_dict(admission.get("resourceWeights")).items():
            if isinstance(weight, (int, float)) and weight < 0:
                _err(
                    errors, here.child("resourceWeights").key(resource), negative(weight), "CFG-12"
                )


def _check_resources(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-13 … CFG-15."""
    resources = as_dict(config.get("resources"))
    at = FieldPath(("resources",))
    inputs: set[str] = set()
    for position, transformation in mappings(resources.get("transformations")):
        here = at.child("transformations").index(position)
        check_enum(
            transformation.get("strategy") or None,
            ("Retain", "Replace"),
            here.child("strategy"),
            errors,
            rule="CFG-13",
            origin="K",
        )
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
    check_enum(
        strategy,
        ("BlockUndeclared", "IgnoreUndeclared"),
        at.child("quotaCheckStrategy"),
        errors,
        rule="CFG-15",
        origin="K",
    )
    if strategy == "IgnoreUndeclared" and strings(resources.get("excludeResourcePrefixes")):
        _err(
            errors,
            at.child("quotaCheckStrategy"),
            "excludeResourcePrefixes cannot be used with IgnoreUndeclared",
            "CFG-15",
        )


def _check_retention_and_multikueue(config: dict[str, Any], errors: list[FieldError]) -> None:
    """CFG-16, CFG-17."""
    workloads = as_dict(as_dict(config.get("objectRetentionPolicies")).get("workloads"))
    multikueue = as_dict(config.get("multiKueue"))
    for block, path in (
        (workloads, FieldPath(("objectRetentionPolicies", "workloads"))),
        (multikueue, FieldPath(("multiKueue",))),
    ):
        for field in (
            "afterFinished",
            "afterDeactivatedByKueue",
            "gcInterval",
            "workerLostTimeout",
        ):
            seconds = _duration(block.get(field), path.child(field), errors, "CFG-16")
            if seconds is not None and seconds < 0:
                _err(errors, path.child(field), negative(block.get(field)), "CFG-16")
    at = FieldPath(("multiKueue",))
    origin = multikueue.get("origin")
    if isinstance(origin, str) and not is_label_value(origin):
        _err(errors, at.child("origin"), not_label_value(origin), "CFG-17")
    incremental = multikueue.get("incrementalDispatcherConfig")
    if isinstance(incremental, dict):
        if multikueue.get("dispatcherName") != INCREMENTAL_DISPATCHER:
            _err(
                errors,
                at.child("incrementalDispatcherConfig"),
                "only valid with the incremental dispatcher",
                "CFG-17",
            )
        step = incremental.get("stepSize")
        if isinstance(step, int) and step < 1:
            _err(
                errors,
                at.child("incrementalDispatcherConfig", "stepSize"),
                "must be at least 1",
                "CFG-17",
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


def validate_configuration(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    command_line_gates: bool = False,
) -> list[FieldError]:
    """Every rule of section 13 on a v1beta2 Configuration: pure, never raises.

    ``command_line_gates`` says whether feature gates were also given on the
    command line (CFG-19).
    """
    errors: list[FieldError] = []
    config = prepare(new, CONFIGURATION, errors)
    if config is None:
        return errors
    errors = [
        error(item.field, item.message, origin="K", rule="CFG-20")
        if item.rule == "UNKNOWN-FIELD"
        else item
        for item in errors
    ]
    _check_integrations(config, errors)
    _check_namespaces(config, errors)
    _check_wait_for_pods_ready(config, errors)
    _check_fair_sharing(config, errors)
    _check_resources(config, errors)
    _check_retention_and_multikueue(config, errors)
    _check_certs_and_gates(config, errors, command_line_gates)
    return in_rule_order(errors, RULE_ORDER)
