"""What kuota refuses in a Configuration (rule CFG-K) and what it accepts without acting on
(warnings): every field of Kueue's Configuration is acted on, refused, or warned about
(docs/configuration.md#fields)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.validation.configuration import check_configuration

V1BETA2 = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}


def check(**fields: Any) -> tuple[list[tuple[str, str, str]], list[str]]:
    errors, warnings = check_configuration({**V1BETA2, **fields})
    return [(e.rule, e.field, e.message) for e in errors], warnings


REFUSED = [
    ({"pprofBindAddress": ":8083"}, "pprofBindAddress", "kuota serves no Go profiler"),
    (
        {"resources": {"deviceClassMappings": [{"name": "gpu", "deviceClassNames": ["gpu"]}]}},
        "resources.deviceClassMappings",
        "kuota does not charge Dynamic Resource Allocation devices",
    ),
    (
        {"multiKueue": {"externalFrameworks": [{"name": "MyJob.v1.example.com"}]}},
        "multiKueue.externalFrameworks",
        "kuota's MultiKueue dispatches batch/v1 Jobs",
    ),
    (
        {"multiKueue": {"clusterProfile": {}}},
        "multiKueue.clusterProfile",
        "kuota does not read the ClusterProfile API",
    ),
    (
        {"leaderElection": {"resourceLock": "endpointsleases"}},
        "leaderElection.resourceLock",
        "Lease only",
    ),
    (
        {"tls": {"curvePreferences": [23]}},
        "tls.curvePreferences",
        "cannot restrict the key exchange groups",
    ),
    (
        {"tls": {"cipherSuites": ["TLS_RSA_WITH_3DES_EDE_CBC_SHA"]}},
        "tls.cipherSuites[0]",
        "not offered by kuota's TLS library",
    ),
    ({"tls": {"cipherSuites": ["nope"]}}, "tls.cipherSuites[0]", 'cipher suite "nope"'),
    ({"tls": {"minVersion": "VersionTLS11"}}, "tls.minVersion", "unsupported value"),
    (
        {"leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}},
        "leaderElection.renewDeadline",
        "must be less than leaseDuration",
    ),
    (
        {"leaderElection": {"retryPeriod": "9s"}},
        "leaderElection.renewDeadline",
        "must be more than 1.2 x retryPeriod",
    ),
    (
        {"controller": {"cacheSyncTimeout": 0}},
        "controller.cacheSyncTimeout",
        "must be greater than 0",
    ),
]


@pytest.mark.parametrize(("fields", "path", "message"), REFUSED, ids=[r[1] for r in REFUSED])
def test_what_kuota_cannot_do_is_refused_naming_the_field(
    fields: dict[str, Any], path: str, message: str
) -> None:
    errors, _ = check(**fields)
    assert [(rule, field) for rule, field, _ in errors] == [("CFG-K", path)]
    assert message in errors[0][2]


ACCEPTED = [
    {"pprofBindAddress": "0"},
    {"pprofBindAddress": ""},
    {"resources": {"deviceClassMappings": []}},
    {"leaderElection": {"resourceLock": "leases", "leaseDuration": "30s", "renewDeadline": "20s"}},
    {"tls": {"minVersion": "VersionTLS13", "cipherSuites": ["TLS_AES_128_GCM_SHA256"]}},
    {"controller": {"cacheSyncTimeout": 120_000_000_000}},
    {"clientConnection": {"qps": -1, "burst": 10}},
    {"webhook": {"port": 9443, "host": "", "certDir": "/certs"}},
    {"metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True}},
    {"metrics": {"localQueueMetrics": {"enable": False}}},
    {"metrics": {"localQueueMetrics": {"enable": True, "localQueueSelector": {}}}},
    {"health": {"healthProbeBindAddress": ":8081", "readinessEndpointName": "ready"}},
    {"internalCertManagement": {"enable": False}},
    {
        "multiKueue": {
            "gcInterval": "0s",
            "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
            "incrementalDispatcherConfig": {"stepSize": 1},
        }
    },
    {"multiKueue": {"dispatcherName": "example.com/my-dispatcher"}},
    {"integrations": {"frameworks": ["batch/job"], "externalFrameworks": ["MyJob.v1.example.com"]}},
    {"waitForPodsReady": {"timeout": "5m", "blockAdmission": True}},
    {"objectRetentionPolicies": {"workloads": {"afterFinished": "1h"}}},
    {
        "admissionFairSharing": {
            "usageHalfLifeTime": "168h",
            "usageSamplingInterval": "5m",
            "resourceWeights": {"cpu": 1, "nvidia.com/gpu": 10},
        }
    },
    {"integrations": {"frameworks": ["batch/job"], "labelKeysToCopy": ["team"]}},
]


@pytest.mark.parametrize("fields", ACCEPTED, ids=[next(iter(f)) for f in ACCEPTED])
def test_what_kuota_acts_on_is_accepted_without_a_word(fields: dict[str, Any]) -> None:
    assert check(**fields) == ([], [])


WARNED = [
    (
        {"integrations": {"frameworks": ["batch/job", "kubeflow.org/tfjob"]}},
        "integrations.frameworks[1]: kuota does not manage kubeflow.org/tfjob",
    ),
    (
        {"metrics": {"customLabels": [{"name": "team"}]}},
        "metrics.customLabels: the CustomMetricLabels feature gate is off",
    ),
    (
        {"controller": {"groupKindConcurrency": {"Job.batch": 5}}},
        "controller.groupKindConcurrency: kuota reconciles every kind in one loop",
    ),
    (
        {"tls": {"minVersion": "VersionTLS13"}, "featureGates": {"TLSOptions": False}},
        "tls: the TLSOptions feature gate is off",
    ),
]


@pytest.mark.parametrize(("fields", "warning"), WARNED, ids=[w for _, w in WARNED])
def test_what_kuota_accepts_without_acting_on_is_a_warning(
    fields: dict[str, Any], warning: str
) -> None:
    errors, warnings = check(**fields)
    assert errors == [] and len(warnings) == 1 and warnings[0].startswith(warning)


def test_a_v1beta1_section_switched_off_asks_for_nothing() -> None:
    assert check(waitForPodsReady={"enable": False}) == ([], [])


def test_the_visibility_servers_address_is_acted_on_and_its_port_checked() -> None:
    assert check(visibilityServer={"bindAddress": "127.0.0.1", "bindPort": 9444}) == ([], [])
    for section in ({"bindPort": 0}, {"bindPort": 65536}):
        errors, _ = check(visibilityServer=section)
        assert [(field, message) for _, field, message in errors] == [
            ("visibilityServer.bindPort", "must be a valid port number (1-65535)")
        ]
    errors, _ = check(visibilityServer={"bindAddress": "localhost"})
    assert [(field, message) for _, field, message in errors] == [
        ("visibilityServer.bindAddress", "must be a valid IP address")
    ]
