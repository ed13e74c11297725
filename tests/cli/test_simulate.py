"""``kuota simulate`` as docs/validation.md#kuota-simulate fixes it: exit codes 0/1/2, the
``--json`` shape, the human table, notes for unknown kinds, validate's
messages on invalid input, file and line for bad YAML."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from scheduler.cli.main import main
from tests.api.seed_examples import documents

SCENARIOS = Path(__file__).parents[1] / "scenarios"
BEST_EFFORT = SCENARIOS / "best-effort-fifo" / "input.yaml"


def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


SMALL = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 8Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ns
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: 2
  template:
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]
      restartPolicy: Never
"""


def test_json_has_exactly_the_contract_shape() -> None:
    code, out, err = run("simulate", "--json", "-", stdin=SMALL)
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {"workloads", "clusterQueues"}
    (key,) = report["workloads"]
    assert key.startswith("ns/job-train-")
    entry = report["workloads"][key]
    assert set(entry) == {"state", "clusterQueue", "flavors", "evictions", "message"}
    assert entry == {
        "state": "Admitted",
        "clusterQueue": "cq",
        "flavors": {"main": {"cpu": "default", "memory": "default"}},
        "evictions": 0,
        "message": "Quota reserved in ClusterQueue cq",
    }
    # requests x count, canonical quantities
    assert report["clusterQueues"] == {
        "cq": {"pending": 0, "admitted": 1, "usage": {"default": {"cpu": "3", "memory": "2Gi"}}}
    }


def test_human_output_is_an_aligned_table_of_the_same_facts() -> None:
    code, out, _ = run("simulate", str(BEST_EFFORT))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "WORKLOAD",
        "STATE",
        "CLUSTERQUEUE",
        "FLAVORS",
        "EVICTIONS",
        "MESSAGE",
    ]
    state_column = lines[0].index("STATE")
    rows = {line.split()[0]: line for line in lines[1:4]}
    assert all(row[state_column:].split()[0] in ("Admitted", "Pending") for row in rows.values())
    assert "Pending" in rows["ns/w1"] and "2 more needed" in rows["ns/w1"]
    assert "main[cpu=default-flavor]" in rows["ns/w2"]
    queue_header = lines.index(next(line for line in lines if line.startswith("CLUSTERQUEUE")))
    assert lines[queue_header].split() == ["CLUSTERQUEUE", "PENDING", "ADMITTED", "USAGE"]
    assert lines[queue_header + 1].split() == ["cq", "1", "2", "default-flavor:", "cpu=8"]


def test_not_steady_within_the_bound_exits_1_and_says_so() -> None:
    code, out, err = run("simulate", "--json", "--max-cycles", "1", str(BEST_EFFORT))
    assert code == 1
    assert "no steady state within 1 scheduling cycles" in err
    assert set(json.loads(out)) == {"workloads", "clusterQueues"}


def test_invalid_input_exits_2_with_the_validate_messages(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SMALL.replace("nominalQuota: 4}", 'nominalQuota: "-1"}'))
    _, validate_out, _ = run("validate", str(bad))
    code, out, err = run("simulate", str(bad))
    assert code == 2 and out == ""
    assert validate_out.strip() and validate_out.strip() in err
    assert validate_out.startswith(
        "ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    )


def test_bad_yaml_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [unclosed\n")
    code, out, err = run("simulate", str(broken))
    assert (code, out) == (2, "")
    assert f"{broken}:5" in err or f"{broken}:4" in err
    assert "invalid YAML" in err


def test_missing_file_exits_2() -> None:
    code, _, err = run("simulate", "/nonexistent/queues.yaml")
    assert code == 2 and "/nonexistent/queues.yaml" in err


def test_unknown_kinds_are_noted_on_stderr_and_ignored() -> None:
    extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
    code, out, err = run("simulate", "--json", "-", stdin=SMALL + extra)
    assert code == 0
    assert "<stdin>:" in err and "'ConfigMap'" in err
    assert json.loads(out)["clusterQueues"]["cq"]["admitted"] == 1


def test_jobs_without_a_queue_name_are_not_managed() -> None:
    unqueued = SMALL.replace("  labels: {kueue.x-k8s.io/queue-name: lq}\n", "")
    code, out, err = run("simulate", "--json", "-", stdin=unqueued)
    assert code == 0 and json.loads(out)["workloads"] == {}
    assert "no kueue.x-k8s.io/queue-name" in err


def test_namespace_labels_feed_the_namespace_selector() -> None:
    selective = SMALL.replace(
        "namespaceSelector: {}", "namespaceSelector: {matchLabels: {team: ml}}"
    )
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {team: ml}}\n---\n"
    _, without, _ = run("simulate", "--json", "-", stdin=selective)
    _, with_labels, _ = run("simulate", "--json", "-", stdin=namespace + selective)
    (entry,) = json.loads(without)["workloads"].values()
    assert (entry["state"], entry["message"]) == (
        "Pending",
        "workload namespace doesn't match ClusterQueue selector",
    )
    assert [item["state"] for item in json.loads(with_labels)["workloads"].values()] == ["Admitted"]


def test_priority_classes_order_the_queue() -> None:
    tight = SMALL.replace("parallelism: 2", "parallelism: 1").replace("cpu: 1500m", "cpu: 3")
    low = tight.split("---\n")[3]
    high = low.replace("name: train", "name: urgent").replace(
        "  labels: {kueue.x-k8s.io/queue-name: lq}",
        "  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: high}",
    )
    wpc = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
        "metadata: {name: high}\nvalue: 1000\n"
    )
    code, out, err = run("simulate", "--json", "-", stdin="---\n".join([tight, high, wpc]))
    assert code == 0, err
    states = {
        key.split("/")[1].rsplit("-", 1)[0]: entry["state"]
        for key, entry in json.loads(out)["workloads"].items()
    }
    assert states == {"job-train": "Pending", "job-urgent": "Admitted"}


def test_help_text_names_timeline_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--timeline", "--plot", "--max-cycles", "--max-events", "nodeSelector", "p50"):
        assert flag in text


def test_plot_without_timeline_exits_2() -> None:
    code, _, err = run("simulate", "--plot", "out.png", str(BEST_EFFORT))
    assert code == 2 and "--timeline" in err


ADMISSION_CHECKED = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: checked}
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks: [{name: prov}]
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: "4"}]}]
"""
ADMISSION_CHECK = """\
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec: {controllerName: example.com/prov}
"""
ACTIVE_STATUS = """status:
  conditions:
  - {type: Active, status: "True", reason: Active, message: ok,
     lastTransitionTime: "2026-01-01T00:00:00Z"}
"""


def test_a_missing_admission_check_makes_the_queue_inactive_with_a_reason() -> None:
    workload = """\
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: checked}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: default}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}}
"""
    code, out, _ = run("simulate", "--json", "-", stdin=ADMISSION_CHECKED + workload)
    assert code == 0
    state = json.loads(out)["workloads"]["default/w"]
    assert state["state"] == "Pending"
    assert state["message"] == "ClusterQueue checked is inactive"
    # A check whose controller never said it is Active holds the queue too.
    code, out, err = run(
        "simulate", "--json", "-", stdin=ADMISSION_CHECKED + ADMISSION_CHECK + workload
    )
    assert code == 0 and "AdmissionCheck/prov is not used" not in err
    assert json.loads(out)["workloads"]["default/w"]["message"] == (
        "ClusterQueue checked is inactive"
    )
    code, out, err = run(
        "simulate",
        "--json",
        "-",
        stdin=ADMISSION_CHECKED + ADMISSION_CHECK + ACTIVE_STATUS + workload,
    )
    assert code == 0 and "AdmissionCheck/prov is not used" not in err
    assert (
        json.loads(out)["workloads"]["default/w"]["message"] != "ClusterQueue checked is inactive"
    )


def test_the_seed_jobset_is_simulated_with_a_pod_set_per_replicated_job() -> None:
    """Seed 003's sample-jobset (generateName, no namespace) on a queue of 1 CPU, twice."""
    jobset = yaml.safe_dump(
        next(d.raw for d in documents() if d.kind == "JobSet" and d.source.startswith("003"))
    )
    queue = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 1}, {name: memory, nominalQuota: 1Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high-priority}
value: 1000
"""
    code, out, err = run("simulate", "--json", "-", stdin=f"{queue}---\n{jobset}---\n{jobset}")
    assert code == 0, err
    workloads = json.loads(out)["workloads"]
    assert len(workloads) == 2
    assert all(key.startswith("default/jobset-sleep-job-") for key in workloads), workloads
    states = sorted(w["state"] for w in workloads.values())
    assert states == ["Admitted", "Pending"], workloads
    admitted = next(w for w in workloads.values() if w["state"] == "Admitted")
    assert admitted["flavors"] == {"workers": {"cpu": "default", "memory": "default"}}


def test_kueues_partial_admission_sample_is_admitted_with_the_nine_cpus_that_fit() -> None:
    """Kueue's own manifests (e2e/data): 20 pods, at least 5, in a queue of 9 CPUs."""
    data = Path(__file__).parents[2] / "e2e" / "data"
    code, out, _ = run(
        "simulate",
        "--json",
        str(data / "single-clusterqueue-setup.yaml"),
        str(data / "sample-job-partial-admission.yaml"),
    )
    assert code == 0
    report = json.loads(out)
    (workload,) = report["workloads"].values()
    assert workload["state"] == "Admitted"
    assert report["clusterQueues"]["cluster-queue"]["usage"] == {
        "default-flavor": {"cpu": "9", "memory": "1800Mi"}
    }
