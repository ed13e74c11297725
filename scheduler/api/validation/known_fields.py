"""The known fields of every kind kuota validates, with their JSON types.

This is the single table behind the "unknown field" rule of validation.md 0.2
(kuota decision) and behind the type checks of step 1 of 0.2.  It is written
as data so that the CRD schemas kuota installs can be generated from it or
compared with it later.

* ``Obj(..., open=True)`` marks objects kuota does not own in full (pod
  templates, ObjectMeta-like blobs, Job specs): the listed fields are typed,
  others pass through unchecked.
* ``foreign`` lists fields that exist in another version of the same kind;
  they are reported with a hint that names the v1beta2 spelling.
* Status blocks that kuota does not validate are ``ANY``.
"""

from __future__ import annotations

from typing import Final

from scheduler.api.validation.shape import Foreign, ListOf, MapOf, Obj, Scalar, Shape

STR, INT, BOOL, NUMBER, QTY, ANY = (
    Scalar.STR,
    Scalar.INT,
    Scalar.BOOL,
    Scalar.NUMBER,
    Scalar.QTY,
    Scalar.ANY,
)


def _renamed(name: str, old_versions: str, new_path: str) -> str:
    return f'unknown field "{name}"; this is the {old_versions} name; v1beta2 uses {new_path}'


OBJECT_META: Final = Obj(
    {
        "name": STR,
        "generateName": STR,
        "namespace": STR,
        "selfLink": STR,
        "uid": STR,
        "resourceVersion": STR,
        "generation": INT,
        "creationTimestamp": ANY,
        "deletionTimestamp": ANY,
        "deletionGracePeriodSeconds": INT,
        "labels": MapOf(STR),
        "annotations": MapOf(STR),
        "ownerReferences": ListOf(ANY),
        "finalizers": ListOf(STR),
        "managedFields": ListOf(ANY),
    }
)

LABEL_SELECTOR: Final = Obj(
    {
        "matchLabels": MapOf(STR),
        "matchExpressions": ListOf(Obj({"key": STR, "operator": STR, "values": ListOf(STR)})),
    }
)

FAIR_SHARING: Final = Obj({"weight": QTY})

RESOURCE_GROUPS: Final = ListOf(
    Obj(
        {
            "coveredResources": ListOf(STR),
            "flavors": ListOf(
                Obj(
                    {
                        "name": STR,
                        "resources": ListOf(
                            Obj(
                                {
                                    "name": STR,
                                    "nominalQuota": QTY,
                                    "borrowingLimit": QTY,
                                    "lendingLimit": QTY,
                                }
                            )
                        ),
                    }
                )
            ),
        }
    )
)

TAINT: Final = Obj({"key": STR, "value": STR, "effect": STR, "timeAdded": ANY})
TOLERATION: Final = Obj(
    {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
)

CONDITION: Final = Obj(
    {
        "type": STR,
        "status": STR,
        "reason": STR,
        "message": STR,
        "lastTransitionTime": ANY,
        "observedGeneration": INT,
    }
)


def _top(
    spec: Shape,
    *,
    status: Shape = ANY,
    extra: dict[str, Shape] | None = None,
    foreign: dict[str, Foreign] | None = None,
) -> Obj:
    fields: dict[str, Shape] = {
        "apiVersion": STR,
        "kind": STR,
        "metadata": OBJECT_META,
        "spec": spec,
        "status": status,
    }
    fields.update(extra or {})
    return Obj(fields, foreign=foreign or {})


CLUSTER_QUEUE: Final = _top(
    Obj(
        {
            "resourceGroups": RESOURCE_GROUPS,
            "cohortName": STR,
            "queueingStrategy": STR,
            "namespaceSelector": LABEL_SELECTOR,
            "flavorFungibility": Obj(
                {"whenCanBorrow": STR, "whenCanPreempt": STR, "preference": STR}
            ),
            "preemption": Obj(
                {
                    "withinClusterQueue": STR,
                    "reclaimWithinCohort": STR,
                    "borrowWithinCohort": Obj({"policy": STR, "maxPriorityThreshold": ANY}),
                }
            ),
            "admissionChecksStrategy": Obj(
                {"admissionChecks": ListOf(Obj({"name": STR, "onFlavors": ListOf(STR)}))}
            ),
            "stopPolicy": STR,
            "fairSharing": FAIR_SHARING,
            "admissionScope": Obj({"admissionMode": STR}),
            "concurrentAdmissionPolicy": Obj(
                {
                    "migration": Obj(
                        {"mode": STR, "constraints": Obj({"lastAcceptableFlavorName": STR})}
                    )
                }
            ),
        },
        foreign={
            "cohort": Foreign("CQ-V1", 'unknown field "cohort"; v1beta2 calls it spec.cohortName'),
            "admissionChecks": Foreign(
                "CQ-V2",
                'unknown field "admissionChecks"; in v1beta2 list the checks under '
                "spec.admissionChecksStrategy.admissionChecks[].name",
            ),
            "resources": Foreign(
                "CQ-V4",
                'unknown field "resources"; v1beta2 ClusterQueues use spec.resourceGroups (see '
                "api.md section 14)",
            ),
        },
    )
)

RESOURCE_FLAVOR: Final = _top(
    Obj(
        {
            "nodeLabels": MapOf(STR),
            "nodeTaints": ListOf(TAINT),
            "tolerations": ListOf(TOLERATION),
            "topologyName": STR,
        }
    ),
    foreign={
        "labels": Foreign("UNKNOWN-FIELD", _renamed("labels", "v1alpha1", "spec.nodeLabels")),
        "taints": Foreign(
            "UNKNOWN-FIELD", _renamed("taints", "v1alpha1/v1alpha2", "spec.nodeTaints")
        ),
    },
)

LOCAL_QUEUE: Final = _top(
    Obj({"clusterQueue": STR, "stopPolicy": STR, "fairSharing": FAIR_SHARING})
)

COHORT: Final = _top(
    Obj(
        {"parentName": STR, "resourceGroups": RESOURCE_GROUPS, "fairSharing": FAIR_SHARING},
        foreign={
            "parent": Foreign("UNKNOWN-FIELD", _renamed("parent", "v1alpha1", "spec.parentName"))
        },
    )
)

_RESOURCES: Final = Obj({"requests": MapOf(QTY), "limits": MapOf(QTY)}, open=True)
_CONTAINER: Final = Obj({"resources": _RESOURCES}, open=True)
POD_TEMPLATE: Final = Obj(
    {
        "metadata": Obj({"labels": MapOf(STR), "annotations": MapOf(STR)}, open=True),
        "spec": Obj(
            {
                "containers": ListOf(_CONTAINER),
                "initContainers": ListOf(_CONTAINER),
                "resources": _RESOURCES,
                "tolerations": ListOf(ANY),
                "nodeSelector": MapOf(STR),
            },
            open=True,
        ),
    },
    open=True,
)

WORKLOAD: Final = _top(
    Obj(
        {
            "podSets": ListOf(
                Obj(
                    {
                        "name": STR,
                        "template": POD_TEMPLATE,
                        "count": INT,
                        "minCount": INT,
                        "topologyRequest": ANY,
                    },
                    foreign={
                        "spec": Foreign(
                            "UNKNOWN-FIELD", _renamed("spec", "v1alpha1", "template.spec")
                        )
                    },
                )
            ),
            "queueName": STR,
            "priorityClassRef": Obj({"group": STR, "kind": STR, "name": STR}),
            "priority": INT,
            "active": BOOL,
            "maximumExecutionTimeSeconds": INT,
            "preemptionGates": ListOf(Obj({"name": STR})),
        },
        foreign={
            "priorityClassName": Foreign(
                "UNKNOWN-FIELD",
                _renamed("priorityClassName", "v1beta1/v1alpha1", "spec.priorityClassRef.name"),
            ),
            "priorityClassSource": Foreign(
                "UNKNOWN-FIELD",
                _renamed("priorityClassSource", "v1beta1", "spec.priorityClassRef.group and .kind"),
            ),
            "admission": Foreign(
                "UNKNOWN-FIELD", _renamed("admission", "v1alpha1", "status.admission")
            ),
        },
    ),
    status=Obj(
        {
            "conditions": ListOf(CONDITION),
            "admission": Obj(
                {
                    "clusterQueue": STR,
                    "podSetAssignments": ListOf(
                        Obj(
                            {
                                "name": STR,
                                "flavors": MapOf(STR),
                                "resourceUsage": MapOf(QTY),
                                "count": INT,
                                "topologyAssignment": ANY,
                                "delayedTopologyRequest": STR,
                            }
                        )
                    ),
                }
            ),
            "requeueState": ANY,
            "reclaimablePods": ListOf(Obj({"name": STR, "count": INT})),
            "admissionChecks": ListOf(
                Obj(
                    {
                        "name": STR,
                        "state": STR,
                        "lastTransitionTime": ANY,
                        "message": STR,
                        "requeueAfterSeconds": INT,
                        "retryCount": INT,
                        "podSetUpdates": ListOf(
                            Obj(
                                {
                                    "name": STR,
                                    "labels": MapOf(STR),
                                    "annotations": MapOf(STR),
                                    "nodeSelector": MapOf(STR),
                                    "tolerations": ListOf(TOLERATION),
                                }
                            )
                        ),
                    }
                )
            ),
            "resourceRequests": ANY,
            "accumulatedPastExecutionTimeSeconds": INT,
            "schedulingStats": ANY,
            "nominatedClusterNames": ListOf(STR),
            "clusterName": STR,
            "unhealthyNodes": ANY,
            "preemptionGates": ANY,
        },
        foreign={
            "accumulatedPastExexcutionTimeSeconds": Foreign(
                "UNKNOWN-FIELD",
                _renamed(
                    "accumulatedPastExexcutionTimeSeconds",
                    "v1beta1",
                    "status.accumulatedPastExecutionTimeSeconds",
                ),
            )
        },
    ),
)

WORKLOAD_PRIORITY_CLASS: Final = Obj(
    {"apiVersion": STR, "kind": STR, "metadata": OBJECT_META, "value": ANY, "description": STR}
)

ADMISSION_CHECK: Final = _top(
    Obj(
        {"controllerName": STR, "parameters": Obj({"apiGroup": STR, "kind": STR, "name": STR})},
        foreign={
            "retryDelayMinutes": Foreign(
                "UNKNOWN-FIELD",
                'unknown field "retryDelayMinutes"; this v1beta1 field was removed in v1beta2',
            )
        },
    )
)

MULTIKUEUE_CONFIG: Final = _top(Obj({"clusters": ListOf(STR), "quotaManagement": STR}))

MULTIKUEUE_CLUSTER: Final = _top(
    Obj(
        {
            "clusterSource": Obj(
                {
                    "kubeConfig": Obj({"location": STR, "locationType": STR}),
                    "clusterProfileRef": Obj({"name": STR}),
                }
            )
        },
        foreign={
            "kubeConfig": Foreign(
                "UNKNOWN-FIELD", _renamed("kubeConfig", "v1beta1", "spec.clusterSource.kubeConfig")
            ),
            "clusterProfileRef": Foreign(
                "UNKNOWN-FIELD",
                _renamed("clusterProfileRef", "v1beta1", "spec.clusterSource.clusterProfileRef"),
            ),
        },
    )
)

TOPOLOGY: Final = _top(Obj({"levels": ListOf(Obj({"nodeLabel": STR}))}))

JOB: Final = _top(
    Obj({"suspend": BOOL, "parallelism": INT, "completions": INT, "completionMode": STR}, open=True)
)

_DURATION = ANY  # Go duration text; parsed by the CFG rules, which report their own message.

CONFIGURATION: Final = Obj(
    {
        "apiVersion": STR,
        "kind": STR,
        "metadata": Obj({"name": STR}, open=True),
        "namespace": STR,
        "manageJobsWithoutQueueName": BOOL,
        "managedJobsNamespaceSelector": LABEL_SELECTOR,
        "waitForPodsReady": Obj(
            {
                "enable": BOOL,
                "timeout": _DURATION,
                "blockAdmission": BOOL,
                "recoveryTimeout": _DURATION,
                "requeuingStrategy": Obj(
                    {
                        "timestamp": STR,
                        "backoffLimitCount": INT,
                        "backoffBaseSeconds": INT,
                        "backoffMaxSeconds": INT,
                    }
                ),
            }
        ),
        "integrations": Obj(
            {
                "frameworks": ListOf(STR),
                "externalFrameworks": ListOf(STR),
                "labelKeysToCopy": ListOf(STR),
            },
            foreign={
                "podOptions": Foreign(
                    "CFG-20",
                    'unknown field "podOptions"; this deprecated v1beta1 field was removed in '
                    "v1beta2",
                )
            },
        ),
        "fairSharing": Obj({"enable": BOOL, "preemptionStrategies": ListOf(STR)}),
        "admissionFairSharing": Obj(
            {
                "usageHalfLifeTime": _DURATION,
                "usageSamplingInterval": _DURATION,
                "resourceWeights": MapOf(NUMBER),
            }
        ),
        "resources": Obj(
            {
                "excludeResourcePrefixes": ListOf(STR),
                "transformations": ListOf(
                    Obj({"input": STR, "strategy": STR, "multiplyBy": STR, "outputs": MapOf(QTY)})
                ),
                "quotaCheckStrategy": STR,
                "deviceClassMappings": ANY,
            }
        ),
        "featureGates": MapOf(BOOL),
        "objectRetentionPolicies": Obj(
            {"workloads": Obj({"afterFinished": _DURATION, "afterDeactivatedByKueue": _DURATION})}
        ),
        "multiKueue": Obj(
            {
                "gcInterval": _DURATION,
                "origin": STR,
                "workerLostTimeout": _DURATION,
                "dispatcherName": STR,
                "externalFrameworks": ANY,
                "clusterProfile": ANY,
                "incrementalDispatcherConfig": Obj({"stepSize": INT}),
            }
        ),
        "webhook": Obj({"port": INT, "host": STR, "certDir": STR}),
        "metrics": Obj(
            {
                "bindAddress": STR,
                "enableClusterQueueResources": BOOL,
                "customLabels": ANY,
                "localQueueMetrics": Obj({"enable": BOOL, "localQueueSelector": LABEL_SELECTOR}),
            }
        ),
        "health": Obj(
            {
                "healthProbeBindAddress": STR,
                "readinessEndpointName": STR,
                "livenessEndpointName": STR,
            }
        ),
        "leaderElection": ANY,
        "clientConnection": Obj({"qps": NUMBER, "burst": INT}),
        "internalCertManagement": Obj(
            {"enable": BOOL, "webhookServiceName": STR, "webhookSecretName": STR}
        ),
        "controller": ANY,
        "pprofBindAddress": STR,
        "tls": ANY,
        "visibilityServer": ANY,
    },
    foreign={
        "queueVisibility": Foreign(
            "CFG-20",
            'unknown field "queueVisibility"; this v1beta1 field was removed in v1beta2 '
            "(use the visibility API visibility.kueue.x-k8s.io)",
        )
    },
)

KNOWN_FIELDS: Final[dict[str, Obj]] = {
    "ClusterQueue": CLUSTER_QUEUE,
    "ResourceFlavor": RESOURCE_FLAVOR,
    "LocalQueue": LOCAL_QUEUE,
    "Cohort": COHORT,
    "Workload": WORKLOAD,
    "WorkloadPriorityClass": WORKLOAD_PRIORITY_CLASS,
    "AdmissionCheck": ADMISSION_CHECK,
    "MultiKueueConfig": MULTIKUEUE_CONFIG,
    "MultiKueueCluster": MULTIKUEUE_CLUSTER,
    "Topology": TOPOLOGY,
    "Job": JOB,
    "Configuration": CONFIGURATION,
}
"""Shape of every kind, by ``kind``."""
