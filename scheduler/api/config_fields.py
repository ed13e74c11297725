"""The Configuration file's fields, described once (``config.kueue.x-k8s.io/v1beta2``).

Everything kuota knows about a field of the Configuration is written here, in
the node vocabulary of the kind descriptions (``scheduler/api/crds/nodes.py``),
and read from here by:

* the parser (``config.py``): each typed section of the ``Configuration``
  dataclass is bound to its node, so types, enum values and flattened
  fields are checked against this description at import; the sections the
  dataclass keeps raw, and the top-level names it refuses, follow from it;
* validation (``validation/configuration.py``): the shape pass (types,
  unknown fields, the hints for removed v1beta1 fields) and the value and
  range checks declared on the nodes (enums, minimums, durations, label
  values), each with its rule id; only the rules that relate several fields
  are written there.  Where kuota cannot do what a field asks, the node says
  so: ``Refused`` (the file is invalid, rule ``CFG-K``, with what kuota does
  instead) or ``NotActedOn`` (accepted, with a warning); every other field
  is acted on (docs/configuration.md#fields);
* the Helm chart (``charts/kuota/hack/generate.py``): the fields with a
  ``chart`` value make the ``config:`` section of ``values.yaml`` (default
  and comment), its part of ``values.schema.json`` and the ConfigMap
  template that renders the file.

Kueue's defaults live on the ``Configuration`` dataclasses (the parser
applies them); the chart's defaults, which differ where kuota ships another
choice, on the ``chart`` values.  Field order is the order of the chart's
values and of the checks within one rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from scheduler.api.crds.nodes import (
    AtLeast,
    ChartValue,
    Check,
    GoDuration,
    LabelValue,
    Leaf,
    N,
    Node,
    NotActedOn,
    NotZero,
    ObjectNode,
    OffWhenDisabled,
    OneOf,
    OnlyWith,
    Refused,
)
from scheduler.api.crds.schema_kit import (
    array,
    boolean,
    enum,
    free_form,
    hint,
    int32,
    int64,
    known,
    label_selector,
    obj,
    quantity_map,
    string,
    string_map,
    unchecked,
    unread,
)
from scheduler.api.feature_gates import REFUSED
from scheduler.api.refs import (
    CUSTOM_LABEL_SOURCE_KINDS,
    FAIR_SHARING_PREEMPTION_STRATEGIES,
    MULTIKUEUE_INCREMENTAL_DISPATCHER,
    QUOTA_CHECK_STRATEGIES,
    REQUEUING_TIMESTAMPS,
    SELECTOR_OPERATORS,
    TRANSFORMATION_STRATEGIES,
)

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
"""Every framework name Kueue knows (``integrations.frameworks``)."""

CHART_FRAMEWORKS: Final = (
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "kubeflow.org/mpijob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/jaxjob",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
)
"""The frameworks kuota implements: the chart enables and accepts exactly these (the
integration registry's, ``tests/chart/test_render.py`` checks; this layer cannot import it)."""

TLS_MIN_VERSIONS: Final = ("VersionTLS12", "VersionTLS13")
"""``tls.minVersion`` values Kueue accepts (it refuses TLS 1.0 and 1.1)."""


QUEUE_VISIBILITY_REPLACEMENT: Final = (
    "pending workloads are served on demand by the visibility API: GET "
    "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/NAME/pendingworkloads"
)
"""Where the v1beta1 ``queueVisibility`` (status snapshots of pending workloads) went
(docs/visibility.md)."""


def _checked(node: N, *checks: Check) -> N:
    return replace(node, checks=checks)


def _charted(node: N, chart: ChartValue) -> N:
    return replace(node, chart=chart)


def _duration(rule: str, *more: Check) -> Leaf:
    """A Go duration, checked well formed and not negative under ``rule`` (then ``more``)."""
    return Leaf(type="duration", checks=(GoDuration(rule), AtLeast(rule), *more))


def _not_negative(node: N, rule: str) -> N:
    return _checked(node, AtLeast(rule))


def _enum(values: Sequence[str], rule: str, *, empty_means_default: bool = False) -> Leaf:
    return _checked(enum(values, empty_means_default=empty_means_default), OneOf(rule))


def _wait_for_pods_ready() -> ObjectNode:
    requeuing = obj(
        {
            "timestamp": _enum(REQUEUING_TIMESTAMPS, "CFG-9"),
            "backoffLimitCount": _not_negative(int32(), "CFG-8"),
            "backoffBaseSeconds": _not_negative(int32(), "CFG-8"),
            "backoffMaxSeconds": _not_negative(int32(), "CFG-8"),
        }
    )
    section = obj(
        {
            "enable": unread(boolean()),  # v1beta1: false turns the section off
            "timeout": _duration(
                "CFG-8", NotZero("CFG-7", "required: give a timeout greater than 0, e.g. 5m")
            ),
            "blockAdmission": boolean(),
            "recoveryTimeout": _duration("CFG-8"),
            "requeuingStrategy": requeuing,
        }
    )
    chart = ChartValue(
        doc="waitForPodsReady section as Kueue documents it (empty: Kueue's defaults).",
        free=True,
    )
    return _charted(_checked(section, OffWhenDisabled()), chart)


def _fair_sharing() -> ObjectNode:
    strategies = array(enum(FAIR_SHARING_PREEMPTION_STRATEGIES))
    section = obj(
        {
            "enable": unread(boolean()),  # v1beta1; the parser reads it with a warning
            "preemptionStrategies": _charted(
                strategies,
                ChartValue(
                    doc="Preemption strategies, in order (Kueue's names).",
                    default=list(FAIR_SHARING_PREEMPTION_STRATEGIES),
                    always=True,
                ),
            ),
        }
    )
    chart = ChartValue(
        doc="Fair sharing between the ClusterQueues of a cohort.",
        switch=("enabled", "Turn fair sharing on (renders the fairSharing section)."),
    )
    return _charted(section, chart)


def _admission_fair_sharing() -> ObjectNode:
    weight = _not_negative(Leaf(type="number"), "CFG-12")
    section = obj(
        {
            "usageHalfLifeTime": _duration("CFG-12"),
            "usageSamplingInterval": Leaf(
                type="duration",
                checks=(
                    GoDuration("CFG-12"),
                    AtLeast("CFG-12", exclusive=True, message="must be greater than 0"),
                ),
            ),
            "resourceWeights": string_map(values=weight),
        }
    )
    return section


def _resources() -> ObjectNode:
    transformation = obj(
        {
            "input": _charted(string(), ChartValue(schema={"minLength": 1})),
            "strategy": _enum(TRANSFORMATION_STRATEGIES, "CFG-13", empty_means_default=True),
            "multiplyBy": string(),
            "outputs": quantity_map(),
        },
        required=["input"],
    )
    section = obj(
        {
            "excludeResourcePrefixes": _charted(
                array(string()),
                ChartValue(doc='Resource name prefixes that quota ignores, e.g. ["example.com/"].'),
            ),
            "transformations": _charted(
                array(transformation),
                ChartValue(
                    doc="Resource transformations: [{input, strategy: Retain|Replace,\n"
                    "multiplyBy?, outputs: {resource: quantity}}]."
                ),
            ),
            "quotaCheckStrategy": _enum(QUOTA_CHECK_STRATEGIES, "CFG-15"),
            "deviceClassMappings": _checked(
                unchecked(array(free_form())),
                Refused(
                    REFUSED,
                    "kuota does not charge Dynamic Resource Allocation devices to quota (a "
                    "ResourceClaim counts against nothing); remove deviceClassMappings",
                ),
            ),
        }
    )
    return _charted(
        section, ChartValue(doc="Resource handling (renders the resources section when set).")
    )


def _integrations() -> ObjectNode:
    frameworks = _charted(
        array(_enum(KNOWN_FRAMEWORKS, "CFG-2")),
        ChartValue(
            doc="Enabled frameworks: every one kuota implements (README, supported kinds); the\n"
            "kinds of a CRD are managed once the CRD is installed.",
            default=list(CHART_FRAMEWORKS),
            always=True,
            schema={"minItems": 1, "items": {"type": "string", "enum": list(CHART_FRAMEWORKS)}},
        ),
    )
    section = obj(
        {
            "frameworks": frameworks,
            "externalFrameworks": array(string()),
            "labelKeysToCopy": _charted(
                array(string()),
                ChartValue(doc="Label keys copied from a Job to its Workload."),
            ),
        },
        foreign={
            "podOptions": hint(
                "CFG-20",
                'unknown field "podOptions"; this deprecated v1beta1 field was removed in v1beta2',
            )
        },
    )
    return _charted(section, ChartValue(doc="Job integrations kuota manages."))


def _multikueue() -> ObjectNode:
    incremental = obj(
        {"stepSize": _checked(int32(), AtLeast("CFG-17", 1, message="must be at least 1"))}
    )
    return obj(
        {
            "gcInterval": _duration("CFG-16"),
            "origin": _checked(string(), LabelValue("CFG-17")),
            "workerLostTimeout": _duration("CFG-16"),
            "dispatcherName": string(),
            "externalFrameworks": _checked(
                unchecked(array(free_form())),
                Refused(
                    REFUSED,
                    "kuota's MultiKueue dispatches batch/v1 Jobs (and Workloads without an "
                    "owner) only; remove externalFrameworks",
                ),
            ),
            "clusterProfile": _checked(
                unchecked(free_form()),
                Refused(
                    REFUSED,
                    "kuota does not read the ClusterProfile API: a MultiKueueCluster connects "
                    "through the kubeconfig in its Secret (clusterSource.kubeConfig); remove "
                    "clusterProfile",
                    even_empty=True,
                ),
            ),
            "incrementalDispatcherConfig": _checked(
                incremental,
                OnlyWith(
                    "CFG-17",
                    "dispatcherName",
                    MULTIKUEUE_INCREMENTAL_DISPATCHER,
                    "only valid with the incremental dispatcher",
                ),
            ),
        }
    )


def _leader_election() -> ObjectNode:
    return obj(
        {
            "leaderElect": boolean(),
            "leaseDuration": _duration(REFUSED),
            "renewDeadline": _duration(REFUSED),
            "retryPeriod": _duration(REFUSED),
            "resourceLock": _checked(
                string(),
                Refused(
                    REFUSED,
                    'kuota elects its leader with a coordination.k8s.io Lease only; use "leases"',
                    allowed=("leases",),
                ),
            ),
            "resourceName": string(),
            "resourceNamespace": string(),
        }
    )


def _tls() -> ObjectNode:
    return obj(
        {
            "minVersion": _enum(TLS_MIN_VERSIONS, REFUSED),
            "cipherSuites": array(string()),
            "curvePreferences": _checked(
                array(int32()),
                Refused(
                    REFUSED,
                    "Python's TLS server cannot restrict the key exchange groups; remove "
                    "curvePreferences (the webhook uses OpenSSL's defaults)",
                ),
            ),
        }
    )


def configuration() -> ObjectNode:
    """Pure: the description of a ``config.kueue.x-k8s.io/v1beta2`` Configuration."""
    selector = label_selector(operators=SELECTOR_OPERATORS)
    retention = obj(
        {
            "workloads": obj(
                {
                    "afterFinished": _duration("CFG-16"),
                    "afterDeactivatedByKueue": _duration("CFG-16"),
                }
            )
        }
    )
    fields: dict[str, Node] = {
        "apiVersion": string(),
        "kind": string(),
        # Accepted by validation; not a field of the Configuration, refused by the parser.
        "metadata": unread(known({"name": string()})),
        "namespace": string(),
        "manageJobsWithoutQueueName": _charted(
            boolean(),
            ChartValue(
                doc="Suspend Jobs without a queue name too (in the managed namespaces);\n"
                'their Workloads go to the namespace\'s LocalQueue named "default".',
                default=False,
                always=True,
            ),
        ),
        "managedJobsNamespaceSelector": _charted(
            selector,
            ChartValue(
                doc="Label selector of the namespaces whose Jobs kuota manages at all (as\n"
                "Kueue v0.19, ManagedJobsNamespaceSelectorAlwaysRespected). A Job in any\n"
                "other namespace, queue name or not, is not kuota's: the webhook is not\n"
                "called for it, it is not suspended and gets no Workload, it runs as if\n"
                "kuota were not installed. kube-system and the release namespace are never\n"
                "managed, whatever this selects. Empty: every other namespace."
            ),
        ),
        "fairSharing": _fair_sharing(),
        "admissionFairSharing": _admission_fair_sharing(),
        "resources": _resources(),
        "integrations": _integrations(),
        "featureGates": _charted(
            string_map(values=boolean()), ChartValue(doc="Feature gates, as {Name: true|false}.")
        ),
        "waitForPodsReady": _wait_for_pods_ready(),
        "objectRetentionPolicies": _charted(
            retention,
            ChartValue(
                doc="objectRetentionPolicies section (e.g. {workloads: {afterFinished: 1h}}).",
                free=True,
            ),
        ),
        "multiKueue": _multikueue(),
        "webhook": obj({"port": int32(), "host": string(), "certDir": string()}),
        "metrics": _charted(
            obj(
                {
                    "bindAddress": string(),
                    "enableClusterQueueResources": _charted(
                        boolean(),
                        ChartValue(
                            doc="Export the ClusterQueues' quota, usage, borrowing and\n"
                            "lending limits and weighted shares, as Kueue's chart does\n"
                            "(docs/metrics.md; Kueue's default: off).",
                            default=True,
                            always=True,
                        ),
                    ),
                    "customLabels": array(
                        obj(
                            {
                                "name": string(),
                                "sourceLabelKey": string(),
                                "sourceAnnotationKey": string(),
                                "sourceKind": _enum(CUSTOM_LABEL_SOURCE_KINDS, "CFG-21"),
                                "trackedValues": array(string()),
                            },
                            required=("name",),
                        )
                    ),
                    "localQueueMetrics": _charted(
                        obj({"enable": boolean(), "localQueueSelector": label_selector()}),
                        ChartValue(
                            doc="The kueue_local_queue_* series: {enable: true,\n"
                            "localQueueSelector: {matchLabels: ...}} (empty: every\n"
                            "LocalQueue, as Kueue).",
                            free=True,
                        ),
                    ),
                }
            ),
            ChartValue(doc="The scheduler's metrics (docs/metrics.md)."),
        ),
        "health": obj(
            {
                "healthProbeBindAddress": string(),
                "readinessEndpointName": string(),
                "livenessEndpointName": string(),
            }
        ),
        "leaderElection": _leader_election(),
        "clientConnection": obj({"qps": Leaf(type="number"), "burst": int32()}),
        "internalCertManagement": obj(
            {"enable": boolean(), "webhookServiceName": string(), "webhookSecretName": string()}
        ),
        "controller": obj(
            {
                "groupKindConcurrency": _checked(
                    string_map(values=int32()),
                    NotActedOn(
                        message="kuota reconciles every kind in one loop, with no worker pool "
                        "per kind: the concurrency is not configurable"
                    ),
                ),
                # Go's time.Duration, which Kueue decodes from an integer of nanoseconds.
                "cacheSyncTimeout": _checked(
                    int64(), AtLeast(REFUSED, 1, message="must be greater than 0")
                ),
            }
        ),
        "pprofBindAddress": _checked(
            string(),
            Refused(
                REFUSED,
                'kuota serves no Go profiler; remove pprofBindAddress (or set it to "0")',
                allowed=("0",),
            ),
        ),
        "tls": _tls(),
        "visibilityServer": obj(
            {
                "bindAddress": string(),
                # The upper bound and the address's form: validation/configuration.py.
                "bindPort": _checked(
                    int32(),
                    AtLeast(REFUSED, 1, message="must be a valid port number (1-65535)"),
                ),
            }
        ),
    }
    return obj(
        fields,
        foreign={
            "queueVisibility": hint(
                "CFG-20",
                'unknown field "queueVisibility"; this v1beta1 field was removed in v1beta2 '
                f"({QUEUE_VISIBILITY_REPLACEMENT})",
            )
        },
    )


CONFIGURATION: Final = configuration()
"""The description every reader uses (nodes are immutable)."""
