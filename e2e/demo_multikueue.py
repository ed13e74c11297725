"""``python -m e2e.demo_multikueue [up|down]``: MultiKueue on three local clusters.

``up`` (``make demo-multikueue``) starts a manager (``mk-manager``, with
``kuota-multikueue``) and two workers (``mk-onprem``, ``mk-cloud``), each its
own control plane on loopback with kuota installed; gives the workers seed
003's ClusterQueue and LocalQueue and the manager seed 003's MultiKueue
objects (``e2e/data/multikueue/manager-setup.yaml``) with a Secret per worker
holding its kubeconfig; submits one Job to the manager and shows where it
runs, until its completion shows on the manager.  With ``--fill-onprem`` a
Job of onprem's own users takes its whole queue first, so the manager's Job
lands on the cloud worker.  ``down`` (``make down-multikueue``) stops all three.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.__main__ import state_dir
from e2e.cluster.tools import ToolPaths
from e2e.kuota_multikueue import (
    Kubectl,
    active,
    start_named_clusters,
    stop_named_clusters,
    wait_for,
    worker_secret,
)

DATA = Path(__file__).resolve().parent / "data"
MANAGER, ONPREM, CLOUD = "mk-manager", "mk-onprem", "mk-cloud"
NAMES = [MANAGER, ONPREM, CLOUD]
WORKERS = {"onprem-worker": ONPREM, "cloud-worker": CLOUD}


def root() -> Path:
    return state_dir(MANAGER).parent


def say(text: str = "") -> None:
    print(text, flush=True)


def where_it_runs(kubectl: dict[str, Kubectl], job: str) -> str:
    lines = []
    for name in NAMES:
        pods = kubectl[name].json("pods", "-n", "default", "-l", f"job-name={job}")
        phases = [p["status"].get("phase", "?") for p in pods.get("items") or []]
        lines.append(f"    {name:<11} pods: {', '.join(phases) if phases else '-'}")
    return "\n".join(lines)


def up(args: argparse.Namespace) -> int:
    say("Starting three clusters (manager + two workers), kuota on each ...")
    clusters = {
        c.name: c for c in start_named_clusters(root(), NAMES, extra={MANAGER: ["--multikueue"]})
    }
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    kubectl = {name: Kubectl(binary, cluster.kubeconfig) for name, cluster in clusters.items()}
    manager = kubectl[MANAGER]
    for cluster_name, worker in WORKERS.items():
        kubectl[worker].apply((DATA / "single-clusterqueue-setup.yaml").read_text())
        manager.apply([worker_secret(f"{cluster_name}-secret", clusters[worker].kubeconfig)])
    manager.apply((DATA / "multikueue" / "manager-setup.yaml").read_text())
    for name in WORKERS:
        wait_for(
            lambda name=name: active(manager.json("multikueuecluster", name)),  # type: ignore[misc]
            lambda seen: seen is not None and seen[0] == "True",
            timeout=60,
            what=f"{name} connected",
        )
    say()
    say("$ kubectl get multikueuecluster   (on the manager)")
    say(manager.run("get", "multikueuecluster"))
    if args.fill_onprem:
        blocker = yaml.safe_load((DATA / "multikueue" / "sample-job.yaml").read_text())
        blocker["metadata"]["name"] = "onprem-local-work"
        blocker["spec"]["parallelism"] = blocker["spec"]["completions"] = 9
        blocker["spec"]["template"]["metadata"]["annotations"][
            "pod-complete.stage.kwok.x-k8s.io/delay"
        ] = "120s"
        kubectl[ONPREM].apply([blocker])
        say("onprem's own users fill its ClusterQueue (9 of 9 CPUs) for 120 s.")
    job: dict[str, Any] = yaml.safe_load((DATA / "multikueue" / "sample-job.yaml").read_text())
    name = f"sample-job-{int(time.time()) % 100000}"
    job["metadata"]["name"] = name
    manager.apply([job])
    say(f"Submitted Job default/{name} once, to the manager.")
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        seen = manager.json("job", name, "-n", "default")
        workloads = manager.json("workloads", "-n", "default").get("items") or []
        mine = [
            w
            for w in workloads
            if (w["metadata"].get("labels") or {}).get("kueue.x-k8s.io/job-uid")
            == seen["metadata"]["uid"]
        ]
        status = mine[0].get("status") or {} if mine else {}
        checks = ", ".join(f"{c['name']}={c['state']}" for c in status.get("admissionChecks") or [])
        say(
            f"  manager: Job succeeded={(seen.get('status') or {}).get('succeeded', 0)}  "
            f"Workload checks [{checks or '-'}] clusterName={status.get('clusterName', '-')}"
        )
        say(where_it_runs(kubectl, name))
        admitted = any(
            c.get("type") == "Admitted" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        if admitted and not status.get("admissionChecks"):
            say(
                "The manager's scheduler admitted the Workload without admission checks: this "
                "build has no two-phase admission, so MultiKueue has nothing to wait for."
            )
            break
        done = any(
            c.get("type") == "Complete" and c.get("status") == "True"
            for c in (seen.get("status") or {}).get("conditions") or []
        )
        if done:
            say(f"The Job ran on {status.get('clusterName')}; its completion shows on the manager.")
            break
        time.sleep(3)
    say()
    for name_ in NAMES:
        say(f"  {name_}: KUBECONFIG={clusters[name_].kubeconfig}")
    say("Stop all three with:  make down-multikueue")
    return 0


def down(args: argparse.Namespace) -> int:
    stop_named_clusters(root(), NAMES)
    say(f"stopped {', '.join(NAMES)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e.demo_multikueue", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    start = commands.add_parser("up", help="start the three clusters and run the demo")
    start.add_argument("--timeout", type=float, default=120, help="seconds to watch the Job")
    start.add_argument(
        "--fill-onprem", action="store_true", help="fill onprem's queue first (spill to cloud)"
    )
    start.set_defaults(run=up)
    commands.add_parser("down", help="stop the three clusters").set_defaults(run=down)
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["up", *(argv or [])])
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
