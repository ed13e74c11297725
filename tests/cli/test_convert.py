"""``kuota convert`` as a user with old manifests uses it: every Kueue version in,
``v1beta2`` out, exactly what the webhook's ``/convert`` gives the API server,
accepted by ``kuota validate``; other objects copied; exit codes as ``validate``'s."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.cli.main import main
from tests.api.seed_examples import documents
from tests.cli.test_validate import seed_is_known_invalid
from webhook.convert import convert_review

LEGACY = """\
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ResourceFlavor
metadata: {name: spot}
labels: {instance-type: spot}
taints:
- {key: spot, value: "true", effect: NoSchedule}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: team-a-cq}
spec:
  namespaceSelector: {}
  cohort: team-ab
  resources:
  - name: cpu
    flavors: [{name: spot, quota: {min: 9, max: 12}}]
  - name: memory
    flavors: [{name: spot, quota: {min: 36Gi}}]
---
apiVersion: kueue.x-k8s.io/v1alpha2
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a-cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: beta}
spec:
  cohort: team-ab
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: spot
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: ondemand}
spec: {nodeLabels: {instance-type: ondemand}}
"""


def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def convert(text: str, *args: str) -> list[dict[str, Any]]:
    code, out, err = run("convert", *args, "-", stdin=text)
    assert code == 0, err
    return [doc for doc in yaml.safe_load_all(out) if doc is not None]


def test_every_kueue_version_comes_out_as_v1beta2_and_other_objects_unchanged() -> None:
    code, out, err = run("convert", "-", stdin=LEGACY)
    assert code == 0, err
    converted = list(yaml.safe_load_all(out))
    assert [(doc["apiVersion"], doc["kind"]) for doc in converted] == [
        ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
        ("v1", "Namespace"),
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
        ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
        ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
    ]
    flavor, namespace, queue, local, beta, current = converted
    assert flavor["spec"] == {
        "nodeLabels": {"instance-type": "spot"},
        "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
    }
    assert namespace == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    # min -> nominalQuota, max - min -> borrowingLimit
    # (docs/api-differences.md#the-v1alpha1-and-v1alpha2-forms).
    assert queue["spec"] == {
        "namespaceSelector": {},
        "cohortName": "team-ab",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "spot",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "9", "borrowingLimit": "3"},
                            {"name": "memory", "nominalQuota": "36Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    assert local["metadata"] == {"name": "main", "namespace": "team-a"}
    assert beta["spec"]["cohortName"] == "team-ab" and "cohort" not in beta["spec"]
    assert current == yaml.safe_load(LEGACY.split("---\n")[-1])
    assert "<stdin>:8: copied apiVersion 'v1' kind 'Namespace' unchanged" in err
    assert err.splitlines()[-1] == (
        "6 object(s): 4 converted to v1beta2, 1 already v1beta2, 1 not Kueue's (copied unchanged)"
    )
    assert "legacy form" not in err, "converting is what was asked: no line per object"


def test_the_output_is_what_the_webhook_answers_the_api_server() -> None:
    """One code path: each object equals the webhook's ConversionReview answer."""
    inputs = [doc for doc in yaml.safe_load_all(LEGACY) if doc["apiVersion"] != "v1"]
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": "kueue.x-k8s.io/v1beta2", "objects": inputs},
    }
    answer, outcome = convert_review(review)
    assert outcome == "converted"
    ours = [doc for doc in convert(LEGACY) if doc["apiVersion"] != "v1"]
    assert ours == answer["response"]["convertedObjects"]


def test_the_output_validates_and_converts_to_itself(tmp_path: Path) -> None:
    path = tmp_path / "converted.yaml"
    code, out, _ = run("convert", "-", stdin=LEGACY)
    path.write_text(out)
    code, checked, err = run("validate", str(path))
    assert (code, checked) == (0, ""), err
    assert "kuota convert" not in err, "no version note for v1beta2 manifests"
    again, twice, _ = run("convert", str(path))
    assert (again, twice) == (0, out)


SEEDS = [
    doc
    for doc in documents()
    if doc.api_version.startswith(("kueue.x-k8s.io/", "config.kueue", "batch/"))
]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"{s.source[:3]}:{s.line}:{s.kind}")
def test_every_seed_converts_and_validate_agrees(seed: Any, tmp_path: Path) -> None:
    """Every seed example: converted to v1beta2; `kuota validate` says the converted file
    is valid exactly when the seed is meant to be (two are not: see
    docs/api-differences.md#examples-from-kueues-documentation-that-kuota-rejects)."""
    source = tmp_path / "seed.yaml"
    source.write_text(yaml.safe_dump(seed.raw))
    code, out, err = run("convert", str(source))
    if seed_is_known_invalid(seed.raw) and code == 1:
        # A legacy object is converted only when it is valid: named with its field.
        assert out == ""
        assert f"error: {source}:1: {seed.kind}/{seed.raw['metadata']['name']}: spec." in err
        return
    assert code == 0, err
    (converted,) = [doc for doc in yaml.safe_load_all(out) if doc is not None]
    if seed.api_version.startswith("kueue.x-k8s.io/"):
        assert converted["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    target = tmp_path / "converted.yaml"
    target.write_text(out)
    checked, lines, notes = run("validate", str(target))
    if seed_is_known_invalid(seed.raw):
        assert checked == 1 and lines.startswith(f"{seed.kind}/{seed.raw['metadata']['name']}: ")
    else:
        assert (checked, lines) == (0, ""), notes


def test_json_output_is_one_object_or_a_list_that_validate_reads(tmp_path: Path) -> None:
    code, out, _ = run("convert", "-o", "json", "-", stdin=LEGACY.split("---\n")[0])
    assert code == 0
    single = json.loads(out)
    assert (single["apiVersion"], single["kind"]) == ("kueue.x-k8s.io/v1beta2", "ResourceFlavor")
    code, out, _ = run("convert", "--output", "json", "-", stdin=LEGACY)
    listed = json.loads(out)
    assert (listed["apiVersion"], listed["kind"], len(listed["items"])) == ("v1", "List", 6)
    assert listed["items"] == convert(LEGACY)
    path = tmp_path / "converted.json"
    path.write_text(out)
    checked, lines, err = run("validate", str(path))
    assert (checked, lines) == (0, ""), err
    assert "5 object(s) checked, 0 invalid" in err


def test_timestamps_are_written_as_the_api_server_reads_them() -> None:
    workload = """\
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Workload
metadata:
  name: w
  namespace: team-a
  creationTimestamp: 2024-05-01T10:00:00Z
spec:
  queueName: main
  podSets:
  - name: main
    count: 1
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
"""
    code, out, err = run("convert", "-", stdin=workload)
    assert code == 0, err
    assert "creationTimestamp: '2024-05-01T10:00:00Z'" in out
    (converted,) = yaml.safe_load_all(out)
    assert converted["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["name"] == "c"


def test_a_v1beta1_configuration_becomes_v1beta2(tmp_path: Path) -> None:
    configuration = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
manageJobsWithoutQueueName: true
waitForPodsReady: {enable: true}
fairSharing: {enable: true}
queueVisibility: {updateIntervalSeconds: 5}
"""
    code, out, err = run("convert", "-", stdin=configuration)
    assert code == 0, err
    assert yaml.safe_load(out) == {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "manageJobsWithoutQueueName": True,
        "waitForPodsReady": {"timeout": "5m", "blockAdmission": True},
        "fairSharing": {
            "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
        },
    }
    assert "warning: <stdin>:1: Configuration/(unnamed): queueVisibility was removed" in err
    path = tmp_path / "config.yaml"
    path.write_text(out)
    checked, lines, notes = run("validate", str(path))
    assert (checked, lines) == (0, ""), notes


def test_an_object_that_cannot_be_converted_exits_1_naming_it_and_writes_nothing() -> None:
    broken = (
        LEGACY
        + """\
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: broken}
spec:
  resources:
  - name: cpu
    flavors: [{name: default, quota: {min: 9, max: 3}}]
---
apiVersion: kueue.x-k8s.io/v1alpha3
kind: ClusterQueue
metadata: {name: future}
"""
    )
    code, out, err = run("convert", "-", stdin=broken)
    assert (code, out) == (1, "")
    assert "error: <stdin>:46: ClusterQueue/broken: spec.resources[0].flavors[0].quota.max: " in err
    assert (
        'error: <stdin>:54: ClusterQueue/future: apiVersion: unsupported version "v1alpha3"' in err
    )
    assert err.splitlines()[-1] == "2 of 8 object(s) cannot be converted; nothing written"


def test_unreadable_input_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(LEGACY.split("---\n")[0] + "---\nkind: ClusterQueue\nspec: a: b\n")
    code, out, err = run("convert", str(path))
    assert (code, out) == (2, "")
    assert f"{path}:9:8: invalid YAML: mapping values are not allowed" in err
    code, _, err = run("convert", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml: cannot read" in err
