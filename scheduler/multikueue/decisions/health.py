"""Is a worker usable, is an AdmissionCheck usable: MultiKueue's Active conditions (pure).

1. :func:`kubeconfig_of` finds the kubeconfig a MultiKueueCluster points at
   (the Secret's key ``kubeconfig`` in kuota's namespace) or says why not;
   :func:`cluster_condition` turns that and the answer of a probe into the
   ``Active`` condition (``Active``/``Connected`` when the worker answered,
   else Kueue's reasons: ``BadKubeConfig`` for a missing Secret, key or
   unreadable kubeconfig, ``ClientConnectionFailed`` for a worker that
   refused, timed out or did not accept the credentials).
2. :func:`admission_check_condition`: ``Active`` when its parameters name a
   MultiKueueConfig whose clusters are all active (``SomeActiveClusters``,
   still True, when some are), else ``BadConfig`` or ``NoUsableClusters``
   with Kueue's messages.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from scheduler.api import objects
from scheduler.api.refs import KUEUE_GROUP, MULTIKUEUE_CONTROLLER, MULTIKUEUE_KUBECONFIG_KEY

ACTIVE_REASON = "Active"
CONNECTED = "Connected"
BAD_KUBECONFIG = "BadKubeConfig"
CONNECTION_FAILED = "ClientConnectionFailed"
BAD_CONFIG = "BadConfig"
NO_USABLE_CLUSTERS = "NoUsableClusters"
SOME_ACTIVE_CLUSTERS = "SomeActiveClusters"
CHECK_ACTIVE_MESSAGE = "The admission check is active"


@dataclass(frozen=True, slots=True)
class ActiveCondition:
    """A condition as decided: ``status`` True/False, Kueue's reason and message."""

    status: bool
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class KubeconfigProblem:
    """Why no kubeconfig could be read; becomes ``Active: False`` with ``reason``."""

    reason: str
    message: str


def secret_name(cluster: Mapping[str, Any]) -> str | KubeconfigProblem:
    """The Secret a MultiKueueCluster's kubeconfig lives in, or why there is none: pure.

    Reads v1beta2 (``spec.clusterSource.kubeConfig``) and the older form
    (``spec.kubeConfig``).  Only ``locationType: Secret`` is served: a
    ``Path`` would read files of kuota's own container, and ClusterProfiles
    are not implemented; both get a clear reason instead.
    """
    spec = objects.spec(cluster)
    source = spec.get("clusterSource") if isinstance(spec.get("clusterSource"), Mapping) else spec
    kubeconfig = source.get("kubeConfig") if isinstance(source, Mapping) else None
    if not isinstance(kubeconfig, Mapping):
        if isinstance(source, Mapping) and source.get("clusterProfileRef"):
            return KubeconfigProblem(
                "MultiKueueClusterProfileFeatureDisabled",
                "load client config failed: clusterProfileRef is not supported by kuota",
            )
        return KubeconfigProblem(
            BAD_KUBECONFIG, "load client config failed: kubeconfig reference is nil"
        )
    location = str(kubeconfig.get("location") or "")
    if str(kubeconfig.get("locationType") or "Secret") != "Secret":
        return KubeconfigProblem(
            BAD_KUBECONFIG,
            f"load client config failed: locationType Path ({location}) is not supported by "
            "kuota; put the kubeconfig in a Secret",
        )
    return location


def kubeconfig_of(
    cluster: Mapping[str, Any], secret: Mapping[str, Any] | None
) -> dict[str, Any] | KubeconfigProblem:
    """The worker's kubeconfig (parsed) from ``secret`` as read (None: not found): pure."""
    name = secret_name(cluster)
    if isinstance(name, KubeconfigProblem):
        return name
    if secret is None:
        return KubeconfigProblem(
            BAD_KUBECONFIG, f'load client config failed: secrets "{name}" not found'
        )
    data = secret.get("data")
    encoded = data.get(MULTIKUEUE_KUBECONFIG_KEY) if isinstance(data, Mapping) else None
    if not isinstance(encoded, str):
        return KubeconfigProblem(
            BAD_KUBECONFIG,
            f'load client config failed: key "{MULTIKUEUE_KUBECONFIG_KEY}" not found in '
            f'secret "{name}"',
        )
    try:
        parsed = yaml.safe_load(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError, yaml.YAMLError) as bad:
        return KubeconfigProblem(
            BAD_KUBECONFIG, f"load client config failed: the kubeconfig does not parse: {bad}"
        )
    problem = kubeconfig_problem(parsed)
    if problem is not None:
        return KubeconfigProblem(BAD_KUBECONFIG, f"load client config failed: {problem}")
    assert isinstance(parsed, dict)
    return parsed


def kubeconfig_problem(config: object) -> str | None:
    """What makes a kubeconfig unfit for a controller that reads it from a Secret: pure.

    As Kueue: no files of the manager's container (token, CA or certificate
    paths), no exec or auth-provider plugins, no disabled TLS verification,
    a server URL for each cluster.
    """
    if not isinstance(config, Mapping):
        return "the kubeconfig is not a mapping"
    clusters = config.get("clusters")
    if not isinstance(clusters, list) or not clusters:
        return "the kubeconfig has no clusters"
    for entry in clusters:
        cluster = entry.get("cluster") if isinstance(entry, Mapping) else None
        name = entry.get("name") if isinstance(entry, Mapping) else "?"
        if not isinstance(cluster, Mapping) or not cluster.get("server"):
            return f"server URL is required for cluster {name}"
        if cluster.get("insecure-skip-tls-verify"):
            return f"insecure TLS verification is not allowed for cluster {name}"
        if cluster.get("certificate-authority"):
            return (
                "certificate-authority file paths are not allowed, use "
                f"certificate-authority-data for cluster {name}"
            )
    for entry in config.get("users") or []:
        user = entry.get("user") if isinstance(entry, Mapping) else None
        if not isinstance(user, Mapping):
            continue
        if user.get("tokenFile"):
            return "tokenFile is not allowed"
        if user.get("exec"):
            return "exec plugins are not allowed"
        if user.get("auth-provider"):
            return "auth providers are not allowed"
        if user.get("client-certificate") or user.get("client-key"):
            return "client certificate file paths are not allowed, use the -data fields"
    return None


def cluster_condition(
    found: dict[str, Any] | KubeconfigProblem, probe: str | None
) -> ActiveCondition:
    """The ``Active`` condition of a MultiKueueCluster: pure.

    ``probe`` is None when the worker answered an authenticated request for
    its Workloads, else what went wrong (only read when a kubeconfig was found).
    """
    if isinstance(found, KubeconfigProblem):
        return ActiveCondition(False, found.reason, found.message)
    if probe is not None:
        return ActiveCondition(False, CONNECTION_FAILED, probe)
    return ActiveCondition(True, ACTIVE_REASON, CONNECTED)


# --- 2. the AdmissionCheck ------------------------------------------------------------------


def config_name(check: Mapping[str, Any]) -> str:
    """The MultiKueueConfig an AdmissionCheck names (``""`` when none): pure."""
    parameters = objects.spec(check).get("parameters")
    return str(parameters.get("name") or "") if isinstance(parameters, Mapping) else ""


def admission_check_condition(
    check: Mapping[str, Any],
    configs: Mapping[str, Mapping[str, Any]],
    clusters: Mapping[str, Mapping[str, Any]],
) -> ActiveCondition:
    """The ``Active`` condition of a MultiKueue AdmissionCheck (Kueue's messages): pure."""
    parameters = objects.spec(check).get("parameters")
    problem: str | None = None
    if not isinstance(parameters, Mapping):
        problem = "missing parameters reference"
    elif not parameters.get("name"):
        problem = "empty name: bad parameters reference"
    elif parameters.get("apiGroup") != KUEUE_GROUP:
        problem = (
            f'wrong group "{parameters.get("apiGroup")}", expecting "{KUEUE_GROUP}": '
            "bad parameters reference"
        )
    elif parameters.get("kind") != "MultiKueueConfig":
        problem = (
            f'wrong kind "{parameters.get("kind")}", expecting "MultiKueueConfig": '
            "bad parameters reference"
        )
    elif str(parameters["name"]) not in configs:
        problem = f'multikueueconfigs.{KUEUE_GROUP} "{parameters["name"]}" not found'
    if problem is not None:
        return ActiveCondition(
            False, BAD_CONFIG, f"Cannot load the AdmissionChecks parameters: {problem}"
        )
    names = config_clusters(configs[config_name(check)])
    missing = [name for name in names if name not in clusters]
    inactive = [
        name for name in names if name in clusters and not objects.is_true(clusters[name], "Active")
    ]
    if not missing and not inactive:
        return ActiveCondition(True, ACTIVE_REASON, CHECK_ACTIVE_MESSAGE)
    parts = []
    if missing:
        parts.append(f"Missing clusters: [{' '.join(missing)}]")
    if inactive:
        parts.append(f"Inactive clusters: [{' '.join(inactive)}]")
    some = len(missing) + len(inactive) < len(names)
    return ActiveCondition(
        some, SOME_ACTIVE_CLUSTERS if some else NO_USABLE_CLUSTERS, ", ".join(parts)
    )


def config_clusters(config: Mapping[str, Any]) -> list[str]:
    """The clusters a MultiKueueConfig lists, in its order: pure."""
    clusters = objects.spec(config).get("clusters")
    return [str(name) for name in clusters] if isinstance(clusters, list) else []


def is_multikueue_check(check: Mapping[str, Any]) -> bool:
    return objects.spec(check).get("controllerName") == MULTIKUEUE_CONTROLLER
