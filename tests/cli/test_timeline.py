"""``kuota simulate --timeline``: trace reading, the virtual-time replay and
its report (wait percentiles, utilisation, makespan), checked on a small
trace computed by hand, and ``--plot`` without matplotlib."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest

from scheduler.cli.main import main
from scheduler.cli.timeline import Sample, percentile, utilisation
from scheduler.cli.trace import TraceError, parse_trace

QUEUES = """\
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
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
"""
# cq has 4 cpu.  j1 runs 0-10 alone; j2 and j3 wait for it and run 10-15;
# j4 waits for them and runs 15-16.  Waits 0, 10, 8, 12.
TRACE_CSV = """\
submit,requests,count,duration,queue,priority,name
0,cpu=4,1,10,ns/lq,0,j1
0,cpu=1,2,5,ns/lq,0,j2
2,cpu=2,1,5,ns/lq,0,j3
3,"cpu=1,memory=1Gi",2,1,ns/lq,0,j4
"""
TRACE_JSONL = (
    "\n".join(
        json.dumps(row)
        for row in [
            {
                "submit": 0,
                "requests": {"cpu": "4"},
                "count": 1,
                "duration": 10,
                "queue": "ns/lq",
                "name": "j1",
            },
            {
                "submit": 0,
                "requests": "cpu=1",
                "count": 2,
                "duration": 5,
                "queue": "ns/lq",
                "name": "j2",
            },
            {"submit": 2, "requests": "cpu=2", "duration": 5, "queue": "ns/lq", "name": "j3"},
            {
                "submit": 3,
                "requests": {"cpu": "1", "memory": "1Gi"},
                "count": 2,
                "duration": 1,
                "queue": "ns/lq",
                "name": "j4",
            },
        ]
    )
    + "\n"
)


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "queues": tmp_path / "queues.yaml",
        "csv": tmp_path / "trace.csv",
        "jsonl": tmp_path / "trace.jsonl",
    }
    paths["queues"].write_text(
        QUEUES.replace("[cpu]", "[cpu, memory]").replace(
            "[{name: cpu, nominalQuota: 4}]",
            "[{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 8Gi}]",
        )
    )
    paths["csv"].write_text(TRACE_CSV)
    paths["jsonl"].write_text(TRACE_JSONL)
    return paths


def test_nearest_rank_percentiles() -> None:
    waits = [0, 10, 8, 12]
    assert [percentile(waits, p) for p in (50, 90, 99, 100)] == [8, 12, 12, 12]
    assert percentile([5], 50) == 5
    assert percentile(list(range(1, 101)), 90) == 90


def test_hand_computed_trace(files: dict[str, Path]) -> None:
    code, out, err = run(
        "simulate", "--json", "--timeline", str(files["csv"]), str(files["queues"])
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["queues"] == {
        "ns/lq": {
            "jobs": 4,
            "admitted": 4,
            "completed": 4,
            "waitSeconds": {"p50": 8, "p90": 12, "p99": 12, "max": 12},
        }
    }
    assert report["makespanSeconds"] == 16
    # cpu: 4 busy over 0-15, 2 over 15-16 -> 62 / (4 x 16); memory: 2Gi of 8Gi over 15-16 -> 2 / 128
    assert report["utilisation"] == {"default": {"cpu": 0.9688, "memory": 0.0156}}
    assert report["jobs"] == {
        "submitted": 4,
        "admitted": 4,
        "completed": 4,
        "neverAdmitted": 0,
        "evictions": 0,
        "deactivated": 0,
    }


def test_a_job_past_its_maximum_execution_time_is_deactivated_and_frees_its_quota(
    files: dict[str, Path],
) -> None:
    # j1 would run 10 s but may run 4: deactivated at 4, never completes; j2 waits for its
    # quota until then.
    files["csv"].write_text(
        "submit,requests,count,duration,queue,name,maxExecutionSeconds\n"
        "0,cpu=4,1,10,ns/lq,j1,4\n"
        "0,cpu=4,1,3,ns/lq,j2,\n"
    )
    code, out, err = run(
        "simulate", "--json", "--timeline", str(files["csv"]), str(files["queues"])
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["jobs"]["deactivated"] == 1
    assert report["jobs"]["completed"] == 1
    assert report["queues"]["ns/lq"]["waitSeconds"]["max"] == 4
    assert report["makespanSeconds"] == 7
    code, human, err = run("simulate", "--timeline", str(files["csv"]), str(files["queues"]))
    assert "1 deactivated (maximum execution time)" in human


def test_json_lines_trace_gives_the_same_report(files: dict[str, Path]) -> None:
    _, from_csv, _ = run(
        "simulate", "--json", "--timeline", str(files["csv"]), str(files["queues"])
    )
    _, from_jsonl, _ = run(
        "simulate", "--json", "--timeline", str(files["jsonl"]), str(files["queues"])
    )
    assert json.loads(from_csv) == json.loads(from_jsonl)


def test_human_report(files: dict[str, Path]) -> None:
    code, out, _ = run("simulate", "--timeline", str(files["csv"]), str(files["queues"]))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "QUEUE",
        "JOBS",
        "ADMITTED",
        "COMPLETED",
        "WAIT",
        "P50",
        "P90",
        "P99",
        "MAX",
    ]
    assert lines[1].split() == ["ns/lq", "4", "4", "4", "8", "12", "12", "12"]
    assert any(line.split() == ["default", "cpu", "96.9%"] for line in lines)
    assert lines[-1].startswith("makespan: 16 s; jobs: 4 submitted, 4 completed, 0 never admitted")


def test_jobs_that_never_fit_are_reported(files: dict[str, Path], tmp_path: Path) -> None:
    trace = tmp_path / "big.csv"
    trace.write_text("submit,requests,count,duration,queue\n0,cpu=1,1,3,ns/lq\n1,cpu=5,1,3,ns/lq\n")
    code, out, _ = run("simulate", "--json", "--timeline", str(trace), str(files["queues"]))
    report = json.loads(out)
    assert code == 0
    assert report["jobs"]["neverAdmitted"] == 1
    assert report["queues"]["ns/lq"]["waitSeconds"] == {"p50": 0, "p90": 0, "p99": 0, "max": 0}
    assert report["makespanSeconds"] == 3


def test_event_bound_exits_1(files: dict[str, Path]) -> None:
    code, _, err = run(
        "simulate",
        "--json",
        "--max-events",
        "2",
        "--timeline",
        str(files["csv"]),
        str(files["queues"]),
    )
    assert code == 1 and "bound" in err


def test_trace_parsing_reads_tolerations_and_node_selectors() -> None:
    (job,) = parse_trace(
        "submit,requests,duration,queue,tolerations,nodeSelector\n"
        "1.5,cpu=2,60,team/q,spot=true:NoSchedule;gpu,instance-type=spot\n",
        "t.csv",
    )
    assert (job.submit, job.count, job.priority, job.queue_key) == (1.5, 1, 0, "team/q")
    assert job.tolerations == (
        {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
        {"key": "gpu", "operator": "Exists"},
    )
    assert job.node_selector == {"instance-type": "spot"}


@pytest.mark.parametrize(
    "text,where,fragment",
    [
        ("submit,requests,duration,queue\n0,cpu=1,5,no-slash\n", "t.csv:2", "namespace/localqueue"),
        (
            "submit,requests,duration,queue\n0,cpu=1,5,a/b\n0,cpu=x,5,a/b\n",
            "t.csv:3",
            "requests cpu",
        ),
        ("submit,requests,duration,queue\n0,,5,a/b\n", "t.csv:2", "requests is required"),
        ("requests,duration\ncpu=1,5\n", "t.csv:1", "header"),
        (
            '{"submit": 0, "requests": "cpu=1", "duration": 1, "queue": "a/b"}\n{oops\n',
            "t.csv:2",
            "invalid JSON",
        ),
    ],
)
def test_bad_traces_name_file_and_line(text: str, where: str, fragment: str) -> None:
    with pytest.raises(TraceError) as failure:
        parse_trace(text, "t.csv")
    assert str(failure.value).startswith(where) and fragment in str(failure.value)


def test_bad_trace_exits_2(files: dict[str, Path], tmp_path: Path) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text("submit,requests,duration,queue\n0,cpu=1,-5,ns/lq\n")
    code, out, err = run("simulate", "--timeline", str(trace), str(files["queues"]))
    assert (code, out) == (2, "") and f"{trace}:2" in err


def test_utilisation_is_time_weighted() -> None:
    samples = [
        Sample(0, {("f", "cpu"): 2000}, 0),
        Sample(5, {("f", "cpu"): 4000}, 0),
        Sample(10, {}, 0),
    ]
    assert utilisation(samples, {("f", "cpu"): 4000}, 0, 10) == {"f": {"cpu": 0.75}}


@pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is not None, reason="matplotlib is installed"
)
def test_plot_without_matplotlib_exits_2_naming_the_extra(
    files: dict[str, Path], tmp_path: Path
) -> None:
    code, out, err = run(
        "simulate",
        "--timeline",
        str(files["csv"]),
        "--plot",
        str(tmp_path / "u.png"),
        str(files["queues"]),
    )
    assert (code, out) == (2, "")
    assert "matplotlib" in err and "kuota[plot]" in err
