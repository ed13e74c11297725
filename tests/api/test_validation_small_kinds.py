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
from tests.api import validation_builders as b
from tests.api.validation_builders import bad, good

HOST = "kubernetes.io/hostname"
PARAMS = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "multikueue-config"}

CASES = [
    (
        validate_workload_priority_class,
        [
            bad(
                "WPC-1",
                b.priority_class(value=None),
                "value",
                "required: give the priority as an integer",
            ),
            bad("WPC-2", b.priority_class(value="high"), "value", "must be a 32-bit integer"),
            bad("WPC-2", b.priority_class(value=2**31), "value", "must be a 32-bit integer"),
            bad(
                "WPC-3",
                b.priority_class(description="x" * 2049),
                "description",
                "must be at most 2048 characters",
            ),
        ],
        [
            good("WPC-1", b.priority_class(value=0)),
            good("WPC-2", b.priority_class(value=-(2**31)), note="min int32"),
            good("WPC-3", b.priority_class(description="x" * 2048)),
            good(
                "WPC-2",
                b.priority_class(value=5),
                old=b.priority_class(value=1),
                note="value is mutable",
            ),
        ],
    ),
    (
        validate_admission_check,
        [
            bad(
                "AC-1",
                b.admission_check(controller=None),
                "spec.controllerName",
                "required: name the controller",
            ),
            bad(
                "AC-1",
                b.admission_check(controller="c" * 254),
                "spec.controllerName",
                "must be at most 253 characters",
            ),
            bad(
                "AC-2",
                b.admission_check(controller="kueue.x-k8s.io/provisioning-request"),
                "spec.controllerName",
                'is immutable; it was "kueue.x-k8s.io/multikueue"',
                old=b.admission_check(),
            ),
            bad(
                "AC-3",
                b.admission_check(
                    parameters={"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig"}
                ),
                "spec.parameters.name",
                "required",
            ),
            bad(
                "AC-4",
                b.admission_check(parameters={**PARAMS, "apiGroup": "Kueue_Group"}),
                "spec.parameters.apiGroup",
                '"Kueue_Group" is not a valid',
            ),
            bad(
                "AC-4",
                b.admission_check(parameters={**PARAMS, "kind": "Multi_Kueue"}),
                "spec.parameters.kind",
                '"Multi_Kueue" is not a valid kind',
            ),
            bad(
                "AC-4",
                b.admission_check(parameters={**PARAMS, "name": "a.b"}),
                "spec.parameters.name",
                '"a.b" is not a valid name',
            ),
        ],
        [
            good("AC-1", b.admission_check(controller="kueue.x-k8s.io/provisioning-request")),
            good("AC-2", b.admission_check(parameters=PARAMS), old=b.admission_check()),
            good("AC-3", b.admission_check(parameters=PARAMS)),
            good(
                "AC-4",
                b.admission_check(parameters={**PARAMS, "kind": "ProvisioningRequestConfig"}),
            ),
        ],
    ),
    (
        validate_multikueue_config,
        [
            bad(
                "MKC-1",
                b.multikueue_config(clusters=[]),
                "spec.clusters",
                "must list at least 1 item(s)",
            ),
            bad(
                "MKC-1",
                b.multikueue_config(clusters=None),
                "spec.clusters",
                "must list at least 1 item(s)",
            ),
            bad(
                "MKC-1",
                b.multikueue_config(clusters=[f"w{n}" for n in range(21)]),
                "spec.clusters",
                "has 21 items; at most 20",
            ),
            bad(
                "MKC-1",
                b.multikueue_config(clusters=["w" * 257]),
                "spec.clusters[0]",
                "must be at most 256 characters",
            ),
            bad(
                "MKC-2",
                b.multikueue_config(clusters=["a", "b", "a"]),
                "spec.clusters",
                'must not contain duplicates ("a" appears twice)',
            ),
            bad(
                "MKC-3",
                b.multikueue_config(clusters=["a"], quotaManagement="Auto"),
                "spec.quotaManagement",
                'unsupported value "Auto": use one of Manual, Automated',
            ),
        ],
        [
            good("MKC-1", b.multikueue_config(clusters=[f"w{n}" for n in range(20)])),
            good("MKC-2", b.multikueue_config(clusters=["a", "b"])),
            good("MKC-3", b.multikueue_config(clusters=["a"], quotaManagement="Automated")),
        ],
    ),
    (
        validate_multikueue_cluster,
        [
            bad(
                "MKCL-1",
                b.multikueue_cluster(
                    source={"kubeConfig": {"location": "s"}, "clusterProfileRef": {"name": "p"}}
                ),
                "spec.clusterSource",
                "set exactly one of kubeConfig or clusterProfileRef",
            ),
            bad("MKCL-1", b.multikueue_cluster(source={}), "spec.clusterSource", "set exactly one"),
            bad(
                "MKCL-1",
                {
                    "apiVersion": b.KUEUE,
                    "kind": "MultiKueueCluster",
                    "metadata": {"name": "w"},
                    "spec": {},
                },
                "spec.clusterSource",
                "set exactly one",
            ),
            bad(
                "MKCL-2",
                b.multikueue_cluster(source={"kubeConfig": {"location": ""}}),
                "spec.clusterSource.kubeConfig.location",
                "required",
            ),
            bad(
                "MKCL-2",
                b.multikueue_cluster(
                    source={"kubeConfig": {"location": "s", "locationType": "File"}}
                ),
                "spec.clusterSource.kubeConfig.locationType",
                'unsupported value "File": use one of Secret, Path',
            ),
            bad(
                "MKCL-2",
                b.multikueue_cluster(source={"clusterProfileRef": {"name": "p" * 257}}),
                "spec.clusterSource.clusterProfileRef.name",
                "must be at most 256 characters",
            ),
        ],
        [
            good("MKCL-1", b.multikueue_cluster()),
            good(
                "MKCL-2",
                b.multikueue_cluster(
                    source={"kubeConfig": {"location": "/etc/kube/worker", "locationType": "Path"}}
                ),
            ),
            good("MKCL-2", b.multikueue_cluster(source={"clusterProfileRef": {"name": "profile"}})),
        ],
    ),
    (
        validate_topology,
        [
            bad("TOPO-1", b.topology(levels=[]), "spec.levels", "must list at least 1 item(s)"),
            bad(
                "TOPO-1",
                b.topology(levels=[f"l{n}" for n in range(17)]),
                "spec.levels",
                "has 17 items; at most 16",
            ),
            bad("TOPO-1", b.topology(levels=[""]), "spec.levels[0].nodeLabel", "required"),
            bad(
                "TOPO-1",
                b.topology(levels=["bad label"]),
                "spec.levels[0].nodeLabel",
                '"bad label" is not a valid node label',
            ),
            bad(
                "TOPO-2",
                b.topology(levels=["zone", "zone"]),
                "spec.levels",
                "must not contain duplicates",
            ),
            bad(
                "TOPO-3",
                b.topology(levels=[HOST, "zone"]),
                "spec.levels",
                "kubernetes.io/hostname may only be the last (lowest) level",
            ),
            bad(
                "TOPO-4",
                b.topology(levels=["zone", "rack"]),
                "spec.levels",
                "levels can only change when kubernetes.io/hostname is the last level",
                old=b.topology(levels=["zone"]),
            ),
        ],
        [
            good("TOPO-1", b.topology(levels=["cloud.example.com/zone", HOST])),
            good("TOPO-2", b.topology(levels=["zone", "rack"])),
            good("TOPO-3", b.topology(levels=[HOST])),
            good(
                "TOPO-4",
                b.topology(levels=["zone", "rack", HOST]),
                old=b.topology(levels=["zone", HOST]),
            ),
        ],
    ),
]

FAILING = [(validator, case) for validator, failing, _ in CASES for case in failing]
PASSING = [(validator, case) for validator, _, passing in CASES for case in passing]


@pytest.mark.parametrize(("validator", "case"), FAILING, ids=[case.id for _, case in FAILING])
def test_failing_case(validator: object, case: b.Bad) -> None:
    b.check_bad(validator, case)


@pytest.mark.parametrize(("validator", "case"), PASSING, ids=[case.id for _, case in PASSING])
def test_passing_case(validator: object, case: b.Good) -> None:
    b.check_good(validator, case)


def test_multikueue_cluster_v1beta1_layout_gets_a_hint() -> None:
    obj = b.with_spec(b.multikueue_cluster(), kubeConfig={"location": "s"})
    b.find(
        validate_multikueue_cluster(obj),
        "spec.kubeConfig",
        "v1beta2 uses spec.clusterSource.kubeConfig",
    )
