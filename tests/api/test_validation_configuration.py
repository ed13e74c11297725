"""Configuration file rules (docs/validation.md#configuration)."""

from __future__ import annotations

import pytest

from scheduler.api.validation import validate_configuration
from scheduler.api.validation.configuration import parse_duration
from tests.api.cases import Bad, Good, bad, check_bad, check_good, good
from tests.builders import configuration

cfg = configuration


def labels(*entries: dict[str, object]) -> object:
    """A Configuration with the CustomMetricLabels gate on and these ``metrics.customLabels``."""
    return configuration().set(
        featureGates={"CustomMetricLabels": True}, metrics={"customLabels": list(entries)}
    )


WAIT = {"timeout": "5m"}

FAILING = [
    bad(
        "CFG-1",
        configuration().set(integrations={"frameworks": []}),
        "integrations.frameworks",
        "required",
    ),
    bad(
        "CFG-2",
        configuration().set(integrations={"frameworks": ["batch/cronjob"]}),
        "integrations.frameworks[0]",
        'unsupported value "batch/cronjob"',
        "batch/job",
    ),
    bad(
        "CFG-3",
        configuration().set(integrations={"frameworks": ["batch/job", "batch/job"]}),
        "integrations.frameworks[1]",
        'duplicate framework "batch/job"',
    ),
    bad(
        "CFG-4",
        configuration().set(integrations={"externalFrameworks": ["myjob"]}),
        "integrations.externalFrameworks[0]",
        "must be written Kind.version.group",
    ),
    bad(
        "CFG-4",
        configuration().set(
            integrations={"externalFrameworks": ["MyJob.v1.example.com", "MyJob.v1.example.com"]}
        ),
        "integrations.externalFrameworks[1]",
        'duplicate framework "MyJob.v1.example.com"',
    ),
    bad(
        "CFG-5",
        configuration().set(
            managedJobsNamespaceSelector={"matchExpressions": [{"key": "team", "operator": "Has"}]}
        ),
        "managedJobsNamespaceSelector.matchExpressions[0].operator",
        '"Has" is not a valid operator',
    ),
    bad(
        "CFG-6",
        configuration().set(managedJobsNamespaceSelector={}),
        "managedJobsNamespaceSelector",
        'must not select the "kube-system" namespace',
    ),
    bad(
        "CFG-6",
        configuration().set(
            namespace="kuota",
            managedJobsNamespaceSelector={
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": ["kube-system"],
                    }
                ]
            },
        ),
        "managedJobsNamespaceSelector",
        'must not select the "kuota" namespace',
    ),
    bad(
        "CFG-7",
        configuration().set(waitForPodsReady={"timeout": "0s"}),
        "waitForPodsReady.timeout",
        "required",
    ),
    bad(
        "CFG-8",
        configuration().set(waitForPodsReady={"timeout": "-5m"}),
        "waitForPodsReady.timeout",
        "greater than or equal to 0, got -5m",
    ),
    bad(
        "CFG-8",
        configuration().set(
            waitForPodsReady={**WAIT, "requeuingStrategy": {"backoffLimitCount": -1}}
        ),
        "waitForPodsReady.requeuingStrategy.backoffLimitCount",
        "got -1",
    ),
    bad(
        "CFG-8",
        configuration().set(waitForPodsReady={"timeout": "soon"}),
        "waitForPodsReady.timeout",
        '"soon" is not a valid duration',
    ),
    bad(
        "CFG-9",
        configuration().set(
            waitForPodsReady={**WAIT, "requeuingStrategy": {"timestamp": "Admission"}}
        ),
        "waitForPodsReady.requeuingStrategy.timestamp",
        'unsupported value "Admission": use one of Eviction, Creation',
    ),
    bad(
        "CFG-10",
        configuration().set(fairSharing={}),
        "fairSharing.preemptionStrategies",
        "required: use [LessThanOrEqualToFinalShare]",
    ),
    bad(
        "CFG-11",
        configuration().set(
            fairSharing={
                "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]
            }
        ),
        "fairSharing.preemptionStrategies",
        "unsupported list",
        "order matters",
    ),
    bad(
        "CFG-12",
        configuration().set(admissionFairSharing={"usageHalfLifeTime": "-1h"}),
        "admissionFairSharing.usageHalfLifeTime",
        "got -1h",
    ),
    bad(
        "CFG-12",
        configuration().set(admissionFairSharing={"usageSamplingInterval": "0s"}),
        "admissionFairSharing.usageSamplingInterval",
        "must be greater than 0",
    ),
    bad(
        "CFG-12",
        configuration().set(admissionFairSharing={"resourceWeights": {"cpu": -0.5}}),
        "admissionFairSharing.resourceWeights[cpu]",
        "got -0.5",
    ),
    bad(
        "CFG-13",
        configuration().set(resources={"transformations": [{"input": "cpu", "strategy": "Drop"}]}),
        "resources.transformations[0].strategy",
        'unsupported value "Drop": use one of Retain, Replace',
    ),
    bad(
        "CFG-14",
        configuration().set(resources={"transformations": [{"input": "cpu"}, {"input": "cpu"}]}),
        "resources.transformations[1].input",
        'duplicate transformation input "cpu"',
    ),
    bad(
        "CFG-15",
        configuration().set(resources={"quotaCheckStrategy": "Ignore"}),
        "resources.quotaCheckStrategy",
        'unsupported value "Ignore"',
    ),
    bad(
        "CFG-15",
        configuration().set(
            resources={
                "quotaCheckStrategy": "IgnoreUndeclared",
                "excludeResourcePrefixes": ["example.com/"],
            }
        ),
        "resources.quotaCheckStrategy",
        "excludeResourcePrefixes cannot be used with IgnoreUndeclared",
    ),
    bad(
        "CFG-16",
        configuration().set(objectRetentionPolicies={"workloads": {"afterFinished": "-1s"}}),
        "objectRetentionPolicies.workloads.afterFinished",
        "got -1s",
    ),
    bad(
        "CFG-16",
        configuration().set(multiKueue={"gcInterval": "-1m"}),
        "multiKueue.gcInterval",
        "got -1m",
    ),
    bad(
        "CFG-17",
        configuration().set(multiKueue={"origin": "not valid"}),
        "multiKueue.origin",
        '"not valid" is not a valid label value',
    ),
    bad(
        "CFG-17",
        configuration().set(multiKueue={"incrementalDispatcherConfig": {"stepSize": 2}}),
        "multiKueue.incrementalDispatcherConfig",
        "only valid with the incremental dispatcher",
    ),
    bad(
        "CFG-17",
        configuration().set(
            multiKueue={
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
                "incrementalDispatcherConfig": {"stepSize": 0},
            }
        ),
        "multiKueue.incrementalDispatcherConfig.stepSize",
        "must be at least 1",
    ),
    bad(
        "CFG-18",
        configuration().set(internalCertManagement={"webhookServiceName": "1-service"}),
        "internalCertManagement.webhookServiceName",
        '"1-service" is not a valid service name',
    ),
    bad(
        "CFG-18",
        configuration().set(internalCertManagement={"webhookSecretName": "Secret_1"}),
        "internalCertManagement.webhookSecretName",
        '"Secret_1"',
    ),
    bad(
        "CFG-19",
        configuration().set(featureGates={"TimeTravel": True}),
        "featureGates",
        'unknown feature gate "TimeTravel"',
    ),
    bad(
        "CFG-19",
        configuration().set(featureGates={"PartialAdmission": False}),
        "featureGates",
        "either on the command line or in the file, not both",
        command_line_gates=True,
    ),
    bad(
        "CFG-20",
        configuration().set(queueVisibility={"updateIntervalSeconds": 5}),
        "queueVisibility",
        'unknown field "queueVisibility"',
    ),
    bad(
        "CFG-20",
        configuration().set(waitForPodsReady={"timeout": "5m", "blockAdmision": True}),
        "waitForPodsReady.blockAdmision",
        'unknown field "blockAdmision"',
    ),
    bad(
        "CFG-21",
        labels({"name": "team-name"}),
        "metrics.customLabels[0].name",
        "must match ^[a-zA-Z][a-zA-Z0-9_]*$",
    ),
    bad(
        "CFG-21",
        labels({"name": "team"}, {"name": "team"}),
        "metrics.customLabels[1].name",
        'duplicate name "team"',
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "sourceLabelKey": "a", "sourceAnnotationKey": "b"}),
        "metrics.customLabels[0]",
        "mutually exclusive",
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "sourceLabelKey": "not a key"}),
        "metrics.customLabels[0].sourceLabelKey",
        '"not a key" is not a valid label key',
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "sourceKind": "Namespace"}),
        "metrics.customLabels[0].sourceKind",
        'unsupported value "Namespace"',
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "sourceKind": "Workload"}),
        "metrics.customLabels[0].trackedValues",
        "must not be empty when sourceKind is 'Workload'",
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "trackedValues": ["a", "a"]}),
        "metrics.customLabels[0].trackedValues",
        "must not contain duplicates",
    ),
    bad(
        "CFG-21",
        labels({"name": "team", "trackedValues": [f"v{i}" for i in range(17)]}),
        "metrics.customLabels[0].trackedValues",
        "must have at most 16 items",
    ),
    bad(
        "CFG-21",
        labels(
            *({"name": f"w{i}", "sourceKind": "Workload", "trackedValues": ["x"]} for i in range(3))
        ),
        "metrics.customLabels",
        "too many custom labels for source kind Workload: found 3, expected <= 2",
    ),
    bad(
        "CFG-21",
        labels(*({"name": f"l{i}", "sourceKind": "LocalQueue"} for i in range(21))),
        "metrics.customLabels",
        "must have at most 20 items",
    ),
]

PASSING = [
    good("CFG-1", configuration(), note="defaults"),
    good(
        "CFG-2",
        configuration().set(
            integrations={
                "frameworks": ["batch/job", "jobset.x-k8s.io/jobset", "kubeflow.org/mpijob"]
            }
        ),
    ),
    good(
        "CFG-4", configuration().set(integrations={"externalFrameworks": ["MyJob.v1.example.com"]})
    ),
    good(
        "CFG-5",
        configuration().set(
            managedJobsNamespaceSelector={"matchLabels": {"kueue-managed": "true"}}
        ),
    ),
    good(
        "CFG-6",
        configuration().set(
            managedJobsNamespaceSelector={
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": ["kube-system", "kueue-system"],
                    }
                ]
            }
        ),
    ),
    good(
        "CFG-7",
        configuration().set(waitForPodsReady={"enable": False, "timeout": "0s"}),
        note="v1beta1 enable false",
    ),
    good(
        "CFG-8",
        configuration().set(
            waitForPodsReady={
                "timeout": "1h30m",
                "recoveryTimeout": "0s",
                "requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 0},
            }
        ),
    ),
    good(
        "CFG-10",
        configuration().set(
            fairSharing={
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
            }
        ),
    ),
    good("CFG-10", configuration().set(fairSharing={"enable": True}), note="v1beta1 enable true"),
    good(
        "CFG-11",
        configuration().set(fairSharing={"preemptionStrategies": ["LessThanInitialShare"]}),
    ),
    good(
        "CFG-12",
        configuration().set(
            admissionFairSharing={
                "usageHalfLifeTime": "0s",
                "usageSamplingInterval": "5m",
                "resourceWeights": {"cpu": 2},
            }
        ),
    ),
    good(
        "CFG-13",
        configuration().set(
            resources={
                "transformations": [
                    {"input": "cpu", "strategy": "Retain", "outputs": {"cpu_credits": "1"}},
                    {"input": "memory", "strategy": "Replace"},
                ]
            }
        ),
    ),
    good(
        "CFG-15",
        configuration().set(
            resources={
                "quotaCheckStrategy": "BlockUndeclared",
                "excludeResourcePrefixes": ["example.com/"],
            }
        ),
    ),
    good(
        "CFG-16",
        configuration().set(
            objectRetentionPolicies={"workloads": {"afterFinished": "0s"}},
            multiKueue={"gcInterval": "1m", "origin": "multikueue"},
        ),
    ),
    good(
        "CFG-18",
        configuration().set(
            internalCertManagement={"enable": False, "webhookServiceName": "1-bad"}
        ),
    ),
    good(
        "CFG-19",
        configuration().set(
            featureGates={"PartialAdmission": False, "TopologyAwareScheduling": True}
        ),
    ),
    good(
        "CFG-21",
        labels(
            {"name": "team"},
            {"name": "tier", "sourceAnnotationKey": "example.com/tier", "sourceKind": "Cohort"},
            {"name": "owner", "sourceKind": "Workload", "trackedValues": ["a", "b"]},
        ),
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: Bad) -> None:
    check_bad(validate_configuration, case)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: Good) -> None:
    check_good(validate_configuration, case)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0), ("30s", 30), ("1h30m", 5400), ("1.5m", 90), ("-5s", -5), ("300ms", 0.3)],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert float(parse_duration(text)) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "m", "1d", "1h 30m", "--1s"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None
