"""``kuota validate`` as a CI pipeline uses it: exit codes, the two output
forms of docs/validation.md#kuota-validate, file and line for unreadable input, and the seeds."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from scheduler.cli.main import main
from tests.api.seed_examples import documents

KNOWN_INVALID_SEEDS = {
    # Both in docs/api-differences.md#examples-from-kueues-documentation-that-kuota-rejects.
    # A flavor named "on_demand" is not a DNS-1123 name (Kueue rejects it too).
    ("ClusterQueue", "cluster-total", "kueue.x-k8s.io/v1alpha1"),
    # Covers cpu and memory but gives only a cpu quota.
    ("ClusterQueue", "team-a-cq", "kueue.x-k8s.io/v1beta2"),
}


def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def seed_is_known_invalid(raw: dict) -> bool:
    key = (raw.get("kind"), raw.get("metadata", {}).get("name"), raw.get("apiVersion"))
    if key not in KNOWN_INVALID_SEEDS:
        return False
    if key[1] == "team-a-cq":  # only the borrowing-limit variant lacks memory
        groups = raw["spec"].get("resourceGroups") or [{}]
        covered = groups[0].get("coveredResources", [])
        quotas = (groups[0].get("flavors") or [{}])[0].get("resources", [])
        return len(quotas) < len(covered)
    return "on_demand" in yaml.safe_dump(raw)


SEEDS = [
    doc
    for doc in documents()
    if doc.api_version.startswith(("kueue.x-k8s.io/", "config.kueue", "batch/"))
]


@pytest.mark.parametrize(
    "seed",
    [s for s in SEEDS if not seed_is_known_invalid(s.raw)],
    ids=lambda s: f"{s.source[:3]}:{s.line}:{s.kind}",
)
def test_every_seed_meant_to_be_valid_passes(seed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "seed.yaml"
    path.write_text(yaml.safe_dump(seed.raw))
    code, out, err = run("validate", str(path))
    assert (code, out) == (0, ""), err


@pytest.mark.parametrize(
    "seed",
    [s for s in SEEDS if seed_is_known_invalid(s.raw)],
    ids=lambda s: f"{s.source[:3]}:{s.line}:{s.kind}",
)
def test_known_invalid_seeds_fail_naming_the_field(seed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "seed.yaml"
    path.write_text(yaml.safe_dump(seed.raw))
    code, out, _ = run("validate", str(path))
    assert code == 1
    line = out.splitlines()[0]
    assert line.startswith(f"ClusterQueue/{seed.raw['metadata']['name']}: spec.resource")


CQ_BAD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "-1"}
"""
FLAVOR_OK = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
"""


def test_an_invalid_object_gives_one_line_per_violation_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "queues.yaml"
    path.write_text(FLAVOR_OK + "---\n" + CQ_BAD)
    code, out, err = run("validate", str(path))
    assert code == 1
    assert out.splitlines() == [
        "ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "must be greater than or equal to 0, got -1"
    ]
    assert "2 object(s) checked, 1 invalid" in err


def test_json_report_has_the_contract_shape() -> None:
    code, out, _ = run("validate", "--json", "-", stdin=FLAVOR_OK + "---\n" + CQ_BAD)
    assert code == 1
    report = json.loads(out)
    assert report["objects"][0] == {
        "kind": "ResourceFlavor",
        "name": "default",
        "namespace": None,
        "valid": True,
        "errors": [],
    }
    bad = report["objects"][1]
    assert (bad["kind"], bad["name"], bad["valid"]) == ("ClusterQueue", "cq", False)
    assert (
        bad["errors"][0]["field"] == "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    )


def test_namespaced_objects_default_to_the_default_namespace() -> None:
    queue = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: q}\nspec: {clusterQueue: cq}\n"
    )
    code, out, _ = run("validate", "--json", "-", stdin=queue)
    assert code == 0
    assert json.loads(out)["objects"][0]["namespace"] == "default"


def test_legacy_and_current_versions_are_both_accepted() -> None:
    legacy = """\
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: legacy}
spec:
  namespaceSelector: {}
  resources:
  - name: cpu
    flavors:
    - name: default
      quota: {min: 9, max: 12}
"""
    assert run("validate", "-", stdin=legacy)[0] == 0
    broken = legacy.replace("max: 12", "max: 3")
    code, out, _ = run("validate", "-", stdin=broken)
    assert code == 1 and "ClusterQueue/legacy: spec.resources[0].flavors[0].quota.max" in out


def test_bad_yaml_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(FLAVOR_OK + "---\nkind: ClusterQueue\nmetadata: {name: cq}\nspec: a: b\n")
    code, out, err = run("validate", str(path))
    assert code == 2 and out == ""
    assert f"{path}:7:8: invalid YAML: mapping values are not allowed" in err


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, _, err = run("validate", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml: cannot read" in err


def test_a_document_that_is_not_an_object_exits_2() -> None:
    code, _, err = run("validate", "-", stdin="- just\n- a list\n")
    assert code == 2 and "<stdin>:1: a document must be a Kubernetes object" in err


def test_unknown_kinds_are_noted_and_ignored() -> None:
    other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + FLAVOR_OK
    code, out, err = run("validate", "-", stdin=other)
    assert (code, out) == (0, "")
    assert "<stdin>:1: skipping apiVersion 'v1' kind 'ConfigMap'" in err


def test_list_documents_are_expanded() -> None:
    listed = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [yaml.safe_load(FLAVOR_OK), yaml.safe_load(CQ_BAD)],
        }
    )
    code, out, _ = run("validate", "-", stdin=listed)
    assert code == 1 and out.startswith("ClusterQueue/cq: ")


def test_installed_console_script_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = Path(sys.executable).with_name("kuota")
    path = tmp_path / "q.yaml"
    path.write_text(CQ_BAD)
    done = subprocess.run(
        [str(script), "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "nominalQuota" in done.stdout


LEGACY_FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ResourceFlavor
metadata: {name: spot}
labels: {instance-type: spot}
"""
BETA1_FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: beta}
spec: {nodeLabels: {instance-type: beta}}
"""


def test_an_alpha_manifest_is_valid_and_the_note_says_how_to_apply_it(tmp_path: Path) -> None:
    """v1alpha1/v1alpha2 are read offline but served only when asked."""
    path = tmp_path / "flavors.yaml"
    path.write_text(LEGACY_FLAVOR + "---\n" + LEGACY_FLAVOR.replace("spot", "spot-2") + "---\n")
    path.write_text(path.read_text() + BETA1_FLAVOR + "---\n" + FLAVOR_OK)
    code, out, err = run("validate", str(path))
    assert (code, out) == (0, "")
    notes = [line for line in err.splitlines() if "kuota convert" in line]
    assert notes == [
        f"note: {path}: 2 object(s) in kueue.x-k8s.io/v1alpha1, a version served in a cluster "
        "only when asked (kuota's CRDs serve v1beta2 and v1beta1 by default, as Kueue v0.19): "
        f"apply the output of `kuota convert {path}`, or serve v1alpha1 with the chart value "
        "crds.servedLegacyVersions"
    ]
    assert err.splitlines()[-1] == "4 object(s) checked, 0 invalid"


def test_the_note_does_not_change_an_invalid_alpha_manifests_lines_and_exit_code() -> None:
    broken = LEGACY_FLAVOR.replace("instance-type: spot", "instance-type: -bad-")
    code, out, err = run("validate", "-", stdin=broken)
    assert code == 1
    (line,) = out.splitlines()  # the note goes to stderr, never among the contract's lines
    assert line.startswith(
        'ResourceFlavor/spot: labels[instance-type]: invalid label value "-bad-"'
    )
    assert "`kuota convert -`" in err and "serve v1alpha1" in err


def test_json_reports_the_note_in_the_alpha_objects_warnings_only() -> None:
    code, out, err = run(
        "validate",
        "--json",
        "-",
        stdin=LEGACY_FLAVOR.replace("v1alpha1", "v1alpha2") + "---\n" + BETA1_FLAVOR,
    )
    assert code == 0
    legacy, beta = json.loads(out)["objects"]
    assert legacy["warnings"] == [
        "kueue.x-k8s.io/v1alpha2 is served in a cluster only when asked (kuota's CRDs serve "
        "v1beta2 and v1beta1 by default, as Kueue v0.19): apply the output of `kuota convert -`, "
        "or serve v1alpha2 with the chart value crds.servedLegacyVersions"
    ]
    assert beta == {
        "kind": "ResourceFlavor",
        "name": "beta",
        "namespace": None,
        "valid": True,
        "errors": [],
    }
    assert "kuota convert" not in err, "--json carries the note; stderr does not repeat it"


KUEUE_SHIPPED = Path(__file__).resolve().parents[1] / "data" / "kueue_v0.19.2"
V1BETA1_CONFIGURATION = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
metadata:
  name: old
fairSharing:
  enable: true
queueVisibility:
  updateIntervalSeconds: 5
integrations:
  frameworks: [batch/job, kubeflow.org/tfjob]
"""


def test_kueues_shipped_configuration_is_valid_and_each_unacted_field_a_warning() -> None:
    path = str(KUEUE_SHIPPED / "controller_manager_config.yaml")
    code, out, err = run("validate", path)
    assert (code, out) == (0, "")
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    unmanaged = [w.split("kuota does not manage ")[1].split(":")[0] for w in warnings[1:]]
    assert unmanaged == [], err
    assert warnings[0] == (
        f"warning: {path}:1: Configuration/(unnamed): controller.groupKindConcurrency: kuota "
        "reconciles every kind in one loop, with no worker pool per kind: the concurrency is "
        "not configurable"
    )
    code, out, err_json = run("validate", "--json", path)
    (entry,) = json.loads(out)["objects"]
    assert entry["valid"] and len(entry["warnings"]) == len(warnings)
    assert entry["warnings"][0].startswith("controller.groupKindConcurrency: ")
    assert [line for line in err_json.splitlines() if line.startswith("warning: ")] == warnings


def test_a_v1beta1_configuration_is_converted_then_checked() -> None:
    code, out, err = run("validate", "--json", "-", stdin=V1BETA1_CONFIGURATION)
    assert code == 0, out
    (entry,) = json.loads(out)["objects"]
    assert entry["kind"] == "Configuration" and entry["name"] == "old" and entry["valid"]
    assert entry["warnings"][0].startswith("queueVisibility was removed in v1beta2")
    assert entry["warnings"][-1].startswith(
        "integrations.frameworks[1]: kuota does not manage kubeflow.org/tfjob"
    )
    bad = V1BETA1_CONFIGURATION + "resources:\n  quotaCheckStrategy: Bogus\n"
    code, out, _ = run("validate", "-", stdin=bad)
    assert code == 1
    assert out.startswith("Configuration/old: resources.quotaCheckStrategy: unsupported value")


def test_what_kuota_refuses_in_a_configuration_is_an_error() -> None:
    config = (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "featureGates:\n  ConcurrentAdmission: true\n"
    )
    code, out, _ = run("validate", "-", stdin=config)
    assert code == 1
    assert out.startswith(
        "Configuration/(unnamed): featureGates[ConcurrentAdmission]: kuota cannot enable this"
    )
