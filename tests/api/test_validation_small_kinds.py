"""WorkloadPriorityClass, AdmissionCheck, MultiKueue and Topology rules.

See docs/validation.md#other-kinds.
"""

from __future__ import annotations

import pytest

from scheduler.api.validation import (
    validate_admission_check,
    validate_multikueue_cluster,
    validate_multikueue_config,
    validate_topology,
    validate_workload_priority_class,
)
from tests.api.cases import Bad, Good, bad, check_bad, check_good, find, good
from tests.builders import (
    KUEUE,
    admission_check,
    multikueue_cluster,
    multikueue_config,
    topology,
    workload_priority_class,
)

HOST = "kubernetes.io/hostname"
PARAMS = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "multikueue-config"}

CASES = [
    (
        validate_workload_priority_class,
        [
            bad(
                "WPC-1",
                workload_priority_class("high"),
                "value",
                "required: give the priority as an integer",
            ),
            bad(
                "WPC-2",
                workload_priority_class("high", "high"),
                "value",
                "must be a 32-bit integer",
            ),
            bad(
                "WPC-2", workload_priority_class("high", 2**31), "value", "must be a 32-bit integer"
            ),
            bad(
                "WPC-3",
                workload_priority_class("high", 100).description("x" * 2049),
                "description",
                "must be at most 2048 characters",
            ),
        ],
        [
            good("WPC-1", workload_priority_class("high", 0)),
            good("WPC-2", workload_priority_class("high", -(2**31)), note="min int32"),
            good("WPC-3", workload_priority_class("high", 100).description("x" * 2048)),
            good(
                "WPC-2",
                workload_priority_class("high", 5),
                old=workload_priority_class("high", 1),
                note="value is mutable",
            ),
        ],
    ),
    (
        validate_admission_check,
        [
            bad(
                "AC-1",
                admission_check("ac"),
                "spec.controllerName",
                "required: name the controller",
            ),
            bad(
                "AC-1",
                admission_check("ac", "c" * 254),
                "spec.controllerName",
                "must be at most 253 characters",
            ),
            bad(
                "AC-2",
                admission_check("ac", "kueue.x-k8s.io/provisioning-request"),
                "spec.controllerName",
                'is immutable; it was "kueue.x-k8s.io/multikueue"',
                old=admission_check("ac", "kueue.x-k8s.io/multikueue"),
            ),
            bad(
                "AC-3",
                admission_check("ac", "kueue.x-k8s.io/multikueue").spec(
                    parameters={"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig"}
                ),
                "spec.parameters.name",
                "required",
            ),
            bad(
                "AC-4",
                admission_check("ac", "kueue.x-k8s.io/multikueue").spec(
                    parameters={**PARAMS, "apiGroup": "Kueue_Group"}
                ),
                "spec.parameters.apiGroup",
                '"Kueue_Group" is not a valid',
            ),
            bad(
                "AC-4",
                admission_check("ac", "kueue.x-k8s.io/multikueue").spec(
                    parameters={**PARAMS, "kind": "Multi_Kueue"}
                ),
                "spec.parameters.kind",
                '"Multi_Kueue" is not a valid kind',
            ),
            bad(
                "AC-4",
                admission_check("ac", "kueue.x-k8s.io/multikueue").spec(
                    parameters={**PARAMS, "name": "a.b"}
                ),
                "spec.parameters.name",
                '"a.b" is not a valid name',
            ),
        ],
        [
            good("AC-1", admission_check("ac", "kueue.x-k8s.io/provisioning-request")),
            good(
                "AC-2",
                admission_check("ac").multikueue("multikueue-config"),
                old=admission_check("ac", "kueue.x-k8s.io/multikueue"),
            ),
            good("AC-3", admission_check("ac").multikueue("multikueue-config")),
            good(
                "AC-4",
                admission_check("ac", "kueue.x-k8s.io/multikueue").spec(
                    parameters={**PARAMS, "kind": "ProvisioningRequestConfig"}
                ),
            ),
        ],
    ),
    (
        validate_multikueue_config,
        [
            bad(
                "MKC-1",
                multikueue_config("mk"),
                "spec.clusters",
                "must list at least 1 item(s)",
            ),
            bad(
                "MKC-1",
                multikueue_config("mk").unset("spec.clusters"),
                "spec.clusters",
                "must list at least 1 item(s)",
            ),
            bad(
                "MKC-1",
                multikueue_config("mk").spec(clusters=[f"w{n}" for n in range(21)]),
                "spec.clusters",
                "has 21 items; at most 20",
            ),
            bad(
                "MKC-1",
                multikueue_config("mk", "w" * 257),
                "spec.clusters[0]",
                "must be at most 256 characters",
            ),
            bad(
                "MKC-2",
                multikueue_config("mk", "a", "b", "a"),
                "spec.clusters",
                'must not contain duplicates ("a" appears twice)',
            ),
            bad(
                "MKC-3",
                multikueue_config("mk", "a").spec(quotaManagement="Auto"),
                "spec.quotaManagement",
                'unsupported value "Auto": use one of Manual, Automated',
            ),
        ],
        [
            good("MKC-1", multikueue_config("mk").spec(clusters=[f"w{n}" for n in range(20)])),
            good("MKC-2", multikueue_config("mk", "a", "b")),
            good("MKC-3", multikueue_config("mk", "a").spec(quotaManagement="Automated")),
        ],
    ),
    (
        validate_multikueue_cluster,
        [
            bad(
                "MKCL-1",
                multikueue_cluster("worker").spec(
                    clusterSource={
                        "kubeConfig": {"location": "s"},
                        "clusterProfileRef": {"name": "p"},
                    }
                ),
                "spec.clusterSource",
                "set exactly one of kubeConfig or clusterProfileRef",
            ),
            bad(
                "MKCL-1",
                multikueue_cluster("worker").spec(clusterSource={}),
                "spec.clusterSource",
                "set exactly one",
            ),
            bad(
                "MKCL-1",
                {
                    "apiVersion": KUEUE,
                    "kind": "MultiKueueCluster",
                    "metadata": {"name": "w"},
                    "spec": {},
                },
                "spec.clusterSource",
                "set exactly one",
            ),
            bad(
                "MKCL-2",
                multikueue_cluster("worker").kubeconfig_secret("", location_type=None),
                "spec.clusterSource.kubeConfig.location",
                "required",
            ),
            bad(
                "MKCL-2",
                multikueue_cluster("worker").kubeconfig_secret("s", location_type="File"),
                "spec.clusterSource.kubeConfig.locationType",
                'unsupported value "File": use one of Secret, Path',
            ),
            bad(
                "MKCL-2",
                multikueue_cluster("worker").spec(
                    clusterSource={"clusterProfileRef": {"name": "p" * 257}}
                ),
                "spec.clusterSource.clusterProfileRef.name",
                "must be at most 256 characters",
            ),
        ],
        [
            good(
                "MKCL-1",
                multikueue_cluster("worker").kubeconfig_secret("worker-secret", location_type=None),
            ),
            good(
                "MKCL-2",
                multikueue_cluster("worker").kubeconfig_secret(
                    "/etc/kube/worker", location_type="Path"
                ),
            ),
            good(
                "MKCL-2",
                multikueue_cluster("worker").spec(
                    clusterSource={"clusterProfileRef": {"name": "profile"}}
                ),
            ),
        ],
    ),
    (
        validate_topology,
        [
            bad("TOPO-1", topology("topo"), "spec.levels", "must list at least 1 item(s)"),
            bad(
                "TOPO-1",
                topology("topo", *[f"l{n}" for n in range(17)]),
                "spec.levels",
                "has 17 items; at most 16",
            ),
            bad("TOPO-1", topology("topo", ""), "spec.levels[0].nodeLabel", "required"),
            bad(
                "TOPO-1",
                topology("topo", "bad label"),
                "spec.levels[0].nodeLabel",
                '"bad label" is not a valid node label',
            ),
            bad(
                "TOPO-2",
                topology("topo", "zone", "zone"),
                "spec.levels",
                "must not contain duplicates",
            ),
            bad(
                "TOPO-3",
                topology("topo", HOST, "zone"),
                "spec.levels",
                "kubernetes.io/hostname may only be the last (lowest) level",
            ),
            bad(
                "TOPO-4",
                topology("topo", "zone", "rack"),
                "spec.levels",
                "levels can only change when kubernetes.io/hostname is the last level",
                old=topology("topo", "zone"),
            ),
        ],
        [
            good("TOPO-1", topology("topo", "cloud.example.com/zone", HOST)),
            good("TOPO-2", topology("topo", "zone", "rack")),
            good("TOPO-3", topology("topo", HOST)),
            good(
                "TOPO-4",
                topology("topo", "zone", "rack", HOST),
                old=topology("topo", "zone", HOST),
            ),
        ],
    ),
]

FAILING = [(validator, case) for validator, failing, _ in CASES for case in failing]
PASSING = [(validator, case) for validator, _, passing in CASES for case in passing]


@pytest.mark.parametrize(("validator", "case"), FAILING, ids=[case.id for _, case in FAILING])
def test_failing_case(validator: object, case: Bad) -> None:
    check_bad(validator, case)


@pytest.mark.parametrize(("validator", "case"), PASSING, ids=[case.id for _, case in PASSING])
def test_passing_case(validator: object, case: Good) -> None:
    check_good(validator, case)


def test_multikueue_cluster_v1beta1_layout_gets_a_hint() -> None:
    obj = (
        multikueue_cluster("worker")
        .kubeconfig_secret("worker-secret", location_type=None)
        .spec(kubeConfig={"location": "s"})
        .build()
    )
    find(
        validate_multikueue_cluster(obj),
        "spec.kubeConfig",
        "v1beta2 uses spec.clusterSource.kubeConfig",
    )
