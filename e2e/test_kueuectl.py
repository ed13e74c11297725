"""Kueue's kueuectl v0.19.2, the real binary, unchanged, against kuota (docs/visibility.md).

Every verb and resource of the tool as a Kueue user runs it: ``create``
(ResourceFlavor, ClusterQueue, LocalQueue), ``list`` (the same and Workloads,
with their POSITION from the visibility API, and a Job's pods), ``stop`` and
``resume`` (ClusterQueue, LocalQueue, Workload), ``delete workload`` (with its
Job, after the confirmation), the pass-through commands that run kubectl
(``get``, ``describe``, ``patch``, ``edit``, ``delete``), and ``version``.
The binary is built from the Go module proxy (e2e/cluster/kueuectl_tools.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import job

from .cluster import kueuectl_tools
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle

pytestmark = pytest.mark.cluster

DELAY = "pod-complete.stage.kwok.x-k8s.io/delay"


@dataclass
class Tools:
    kueuectl: Path
    kubectl_binary: Path
    env: dict[str, str]

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.kueuectl), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )

    def ok(self, *args: str, stdin: str = "") -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"kueuectl {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            [str(self.kubectl_binary), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def get(self, *args: str) -> dict[str, Any]:
        return dict(json.loads(self.kubectl("get", *args, "-o", "json")))


def table(text: str) -> list[dict[str, str]]:
    """kubectl-style table rows by column, the columns cut at the header's positions."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    # Two-word headings ("POSITION IN QUEUE") are one column: keep starts after two spaces.
    starts = [s for s in starts if s == 0 or header[s - 2 : s] == "  "]
    bounds = [*starts[1:], None]
    names = [header[a:b].strip() for a, b in zip(starts, bounds, strict=True)]
    return [
        {name: line[a:b].strip() for name, a, b in zip(names, starts, bounds, strict=True)}
        for line in lines[1:]
    ]


def eventually(probe: Callable[[], Any], accept: Callable[[Any], bool], what: str) -> Any:
    deadline = time.monotonic() + 60
    while True:
        last = probe()
        if accept(last):
            return last
        assert time.monotonic() < deadline, f"timed out waiting for {what}; last: {last!r}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def tools(cluster: ClusterHandle, tmp_path_factory: pytest.TempPathFactory) -> Tools:
    kubectl = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    home = tmp_path_factory.mktemp("kueuectl-home")
    env = {
        "PATH": f"{kubectl.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "KUBECONFIG": str(cluster.kubeconfig),
        "LANG": "C.UTF-8",
    }
    return Tools(kueuectl_tools.resolve(), kubectl, env)


@dataclass
class Names:
    flavor: str
    cq: str
    """With 1 CPU of quota in ``flavor``."""
    cohort_member: str
    """Without quota, in a cohort."""
    namespace: str


@pytest.fixture
def names(tools: Tools, visibility_api: None) -> Iterator[Names]:
    suffix = uuid.uuid4().hex[:6]
    created = Names(*(f"kctl-{suffix}{tail}" for tail in ("", "", "-cohort", "")))
    tools.kubectl("create", "namespace", created.namespace)
    yield created
    tools.kubectl("delete", "namespace", created.namespace, "--wait=false")
    for kind, name in (
        ("clusterqueue", created.cq),
        ("clusterqueue", created.cohort_member),
        ("resourceflavor", created.flavor),
    ):
        tools.run("delete", kind, name, "--ignore-not-found", "--wait=false")


def submit(tools: Tools, name: str, namespace: str, queue: str) -> None:
    manifest = (
        job(name, namespace).queue(queue).requests(cpu="1").template_annotations({DELAY: "600s"})
    )
    tools.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest.build()))


def workloads(tools: Tools, namespace: str) -> dict[str, dict[str, str]]:
    """``kueuectl list workload`` rows by JOB NAME."""
    return {row["JOB NAME"]: row for row in table(tools.ok("list", "workload", "-n", namespace))}


def test_create_list_stop_resume_delete_and_pass_through(tools: Tools, names: Names) -> None:
    n = names
    tools.ok("create", "resourceflavor", n.flavor, "--node-labels", "instance-type=ondemand")
    tools.ok("create", "clusterqueue", n.cohort_member, "--cohort", f"co-{n.cq}")
    tools.ok("create", "clusterqueue", n.cq, "--nominal-quota", f"{n.flavor}:cpu=1")
    tools.ok("create", "localqueue", "lq", "-n", n.namespace, "--clusterqueue", n.cq)
    rf = tools.get("resourceflavor", n.flavor)
    assert rf["spec"]["nodeLabels"] == {"instance-type": "ondemand"}
    quota = tools.get("clusterqueue", n.cq)["spec"]["resourceGroups"][0]
    assert quota["flavors"] == [
        {"name": n.flavor, "resources": [{"name": "cpu", "nominalQuota": "1"}]}
    ]
    assert tools.get("clusterqueue", n.cohort_member)["spec"]["cohortName"] == f"co-{n.cq}"

    listed = json.loads(tools.ok("list", "localqueue", "-n", n.namespace, "-o", "json"))
    assert [(i["metadata"]["name"], i["spec"]["clusterQueue"]) for i in listed["items"]] == [
        ("lq", n.cq)
    ]
    assert n.flavor in {r["NAME"] for r in table(tools.ok("list", "resourceflavor"))}
    eventually(  # the scheduler writes the Active condition within a second or so
        lambda: {r["NAME"]: r for r in table(tools.ok("list", "clusterqueue"))}[n.cq]["ACTIVE"],
        lambda active: active == "true",
        "the new ClusterQueue active",
    )

    for name in ("first", "second", "third"):
        submit(tools, name, n.namespace, "lq")
        time.sleep(1.1)  # distinct creation seconds: a deterministic queue order
    rows = eventually(
        lambda: workloads(tools, n.namespace),
        lambda got: (
            [got.get(j, {}).get("POSITION IN QUEUE") for j in ("second", "third")] == ["0", "1"]
        ),
        "positions 0 and 1 from the visibility API",
    )
    assert rows["first"]["STATUS"] == "ADMITTED" and rows["first"]["POSITION IN QUEUE"] == ""
    assert {r["STATUS"] for j, r in rows.items() if j != "first"} == {"PENDING"}
    pending = table(tools.ok("list", "workload", "-n", n.namespace, "--status", "pending"))
    assert sorted(r["JOB NAME"] for r in pending) == ["second", "third"]
    for_job = table(tools.ok("list", "workload", "-n", n.namespace, "--for", "job/third"))
    assert [r["JOB NAME"] for r in for_job] == ["third"]
    pods = table(tools.ok("list", "pods", "-n", n.namespace, "--for", "job/first"))
    assert len(pods) == 1 and pods[0]["NAME"].startswith("first-")

    # stop / resume a Workload: spec.active, out of the queue and back in line.
    second = rows["second"]["NAME"]
    tools.ok("stop", "workload", second, "-n", n.namespace)
    assert tools.get("workload", second, "-n", n.namespace)["spec"]["active"] is False
    rows = eventually(
        lambda: workloads(tools, n.namespace),
        lambda got: (
            got["third"]["POSITION IN QUEUE"] == "0" and got["second"]["POSITION IN QUEUE"] == ""
        ),
        "the stopped Workload out of line",
    )
    tools.ok("resume", "workload", second, "-n", n.namespace)
    assert tools.get("workload", second, "-n", n.namespace)["spec"]["active"] is True
    eventually(
        lambda: workloads(tools, n.namespace)["second"]["POSITION IN QUEUE"],
        lambda got: got == "0",
        "the resumed Workload back at its place",
    )

    # stop / resume a LocalQueue: Hold keeps the running Job, resume clears the policy.
    tools.ok("stop", "localqueue", "lq", "-n", n.namespace, "--keep-already-running")
    assert tools.get("localqueue", "lq", "-n", n.namespace)["spec"]["stopPolicy"] == "Hold"
    tools.ok("resume", "localqueue", "lq", "-n", n.namespace)
    assert tools.get("localqueue", "lq", "-n", n.namespace)["spec"]["stopPolicy"] == "None"

    # stop / resume a ClusterQueue: HoldAndDrain evicts the running Job; resume admits again.
    tools.ok("stop", "clusterqueue", n.cq)
    assert tools.get("clusterqueue", n.cq)["spec"]["stopPolicy"] == "HoldAndDrain"
    eventually(
        lambda: {r["NAME"]: r for r in table(tools.ok("list", "clusterqueue"))}[n.cq]["ACTIVE"],
        lambda active: active == "false",
        "the stopped ClusterQueue inactive",
    )
    eventually(
        lambda: tools.get("job", "first", "-n", n.namespace)["spec"]["suspend"],
        lambda suspended: suspended is True,
        "the running Job drained (suspended)",
    )
    tools.ok("resume", "clusterqueue", n.cq)
    assert tools.get("clusterqueue", n.cq)["spec"]["stopPolicy"] == "None"
    eventually(
        lambda: workloads(tools, n.namespace)["first"]["STATUS"],
        lambda status: status == "ADMITTED",
        "the drained Job admitted again",
    )

    # delete workload: asks first (and "n" cancels), deletes the Job with --yes.
    third = workloads(tools, n.namespace)["third"]["NAME"]
    asked = tools.run("delete", "workload", third, "-n", n.namespace, stdin="n\n")
    assert "Do you want to proceed (y/n)?" in asked.stdout and "canceled" in asked.stdout
    tools.ok("delete", "workload", third, "-n", n.namespace, "--yes")
    eventually(
        lambda: "third" in tools.kubectl("get", "jobs", "-n", n.namespace, "-o", "name"),
        lambda present: not present,
        "the deleted Workload's Job gone",
    )

    # pass-through to kubectl: get, describe, patch, edit (no change), delete.
    assert n.cq in tools.ok("get", "clusterqueue", n.cq)
    assert "Cluster Queue: " in tools.ok("describe", "localqueue", "lq", "-n", n.namespace)
    tools.ok(
        "patch", "localqueue", "lq", "-n", n.namespace, "--type=merge",
        "-p", '{"spec":{"stopPolicy":"Hold"}}',
    )  # fmt: skip
    assert tools.get("localqueue", "lq", "-n", n.namespace)["spec"]["stopPolicy"] == "Hold"
    tools.env["KUBE_EDITOR"] = "true"  # an editor that changes nothing
    edited = tools.run("edit", "resourceflavor", n.flavor)
    assert edited.returncode == 0 and "no changes made" in edited.stdout + edited.stderr
    tools.ok("delete", "localqueue", "lq", "-n", n.namespace)
    assert "lq" not in tools.kubectl("get", "localqueues", "-n", n.namespace, "-o", "name")


def test_version_names_the_pinned_release(tools: Tools) -> None:
    out = tools.ok("version")
    assert out.splitlines()[0] == f"Client Version: {kueuectl_tools.KUEUE}"
