"""``python -m e2e.demo``: kuota at work on the local cluster, for a newcomer.

Run after ``python -m e2e.cluster up --kuota`` (``make demo`` does both).  It
applies the seed example's queues (``e2e/demo/queues.yaml``: ResourceFlavors
``ondemand`` and ``spot`` matching the kwok nodes, the ClusterQueue
``research-pool`` with on-demand then spot quota, the LocalQueue
``team-ml/training``), submits six Jobs exactly as a user writes them
(``e2e/demo/jobs.yaml``; kwok runs each pod for 20 s), then shows what the
user commands show while the Jobs are suspended, admitted to a flavor, run
and complete: ``kuota status`` and ``kuota list workloads`` every few
seconds, and once ``kuota explain`` for a Job that waits.

It is bounded (``--timeout``, 90 s by default) and leaves everything running:
the queues and finished Jobs stay for the user to explore.  Running it again
submits six more Jobs (they have generated names).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from e2e.cluster.__main__ import state_dir
from e2e.cluster.controlplane import read_state
from e2e.cluster.tools import ToolPaths

DEMO_DIR = Path(__file__).resolve().parent / "demo"
REPO_ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "team-ml"


def say(text: str = "") -> None:
    print(text, flush=True)


def kubectl(kubeconfig: str, *args: str) -> str:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    result = subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": kubeconfig},
    )
    if result.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def kuota(kubeconfig: str, *args: str, show: bool = True) -> str:
    """Run the ``kuota`` command as a user would, and print it with its output."""
    result = subprocess.run(
        [sys.executable, "-m", "scheduler.cli.main", *args, "--kubeconfig", kubeconfig],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
    )
    if show:
        say(f"$ kuota {' '.join(args)}")
        say(result.stdout.rstrip() or result.stderr.rstrip())
        say()
    return result.stdout


def workload_states(kubeconfig: str) -> dict[str, str]:
    """Workload name -> Pending / Admitted / Finished, from the cluster."""
    listed = json.loads(
        kubectl(kubeconfig, "get", "workloads.kueue.x-k8s.io", "-n", NAMESPACE, "-o", "json")
    )
    states = {}
    for item in listed["items"]:
        conditions = {
            c["type"]: c["status"] for c in (item.get("status") or {}).get("conditions") or []
        }
        if conditions.get("Finished") == "True":
            states[item["metadata"]["name"]] = "Finished"
        elif conditions.get("Admitted") == "True":
            states[item["metadata"]["name"]] = "Admitted"
        else:
            states[item["metadata"]["name"]] = "Pending"
    return states


def waiting_job(kubeconfig: str, submitted: set[str]) -> str | None:
    """One of our Jobs whose Workload has a pending explanation, if any."""
    listed = json.loads(
        kubectl(kubeconfig, "get", "workloads.kueue.x-k8s.io", "-n", NAMESPACE, "-o", "json")
    )
    for item in listed["items"]:
        owner = next(iter(item["metadata"].get("ownerReferences") or []), {}).get("name")
        reserved = next(
            (
                c
                for c in (item.get("status") or {}).get("conditions") or []
                if c["type"] == "QuotaReserved"
            ),
            None,
        )
        if (
            owner in submitted
            and reserved
            and reserved["status"] == "False"
            and "more needed" in reserved["message"]
        ):
            return str(owner)
    return None


def show_running_pods(kubeconfig: str) -> bool:
    """Once pods run: where they landed (the flavor's nodes); whether anything was shown."""
    pods = json.loads(kubectl(kubeconfig, "get", "pods", "-n", NAMESPACE, "-o", "json"))["items"]
    running = [pod for pod in pods if (pod.get("status") or {}).get("phase") == "Running"]
    if not running:
        return False
    say(
        "$ kubectl get pods -n team-ml  (running ones: the admitted flavor's nodeSelector put "
        "them there)"
    )
    for pod in sorted(running, key=lambda item: item["metadata"]["name"]):
        selector = (pod["spec"].get("nodeSelector") or {}).get("instance-type", "-")
        say(
            f"{pod['metadata']['name']:<28} instance-type={selector:<9} node "
            f"{pod['spec'].get('nodeName')}"
        )
    say()
    return True


def run(timeout: float, interval: float, name: str) -> int:
    state = read_state(state_dir(name))
    if state is None or not state.get("kubeconfig"):
        print(
            f"cluster {name!r} is not running; start it with: python -m e2e.cluster up --kuota",
            file=sys.stderr,
        )
        return 1
    kubeconfig = str(state["kubeconfig"])
    say("== The queues of the seed example (e2e/demo/queues.yaml)")
    say(kubectl(kubeconfig, "apply", "-f", str(DEMO_DIR / "queues.yaml")).rstrip())
    say()
    say(
        "== Six Jobs, as a user writes them (e2e/demo/jobs.yaml): 2 CPUs each, on-demand quota 4, "
        "spot quota 4"
    )
    created = kubectl(kubeconfig, "create", "-f", str(DEMO_DIR / "jobs.yaml"), "-o", "name")
    submitted = {line.split("/", 1)[1] for line in created.split()}
    say("\n".join(f"job.batch/{job} created" for job in sorted(submitted)))
    say()
    start = time.monotonic()
    deadline = start + timeout
    explained = pods_shown = False
    while True:
        say(f"== {time.monotonic() - start:.0f} s after submitting")
        kuota(kubeconfig, "status")
        kuota(kubeconfig, "list", "workloads", "-n", NAMESPACE)
        if not explained:
            job = waiting_job(kubeconfig, submitted)
            if job is not None:
                kuota(kubeconfig, "explain", job, "-n", NAMESPACE)
                explained = True
        states = workload_states(kubeconfig)
        if not pods_shown:
            pods_shown = show_running_pods(kubeconfig)
        if (
            states
            and all(value == "Finished" for value in states.values())
            and len(states) >= len(submitted)
        ):
            say(
                "Every Job was admitted to a flavor, ran on its nodes and finished; the quota is "
                "free again."
            )
            return 0
        if time.monotonic() + interval > deadline:
            say(
                f"The demo stops watching after {timeout:.0f} s; the Jobs carry on (kuota status "
                "shows them)."
            )
            return 0
        time.sleep(interval)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m e2e.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--name", default="kuota", help="cluster name (default: kuota)")
    parser.add_argument(
        "--timeout", type=float, default=90, help="stop watching after this many seconds (90)"
    )
    parser.add_argument("--interval", type=float, default=10, help="seconds between reports (10)")
    args = parser.parse_args(argv)
    try:
        return run(args.timeout, args.interval, args.name)
    except (RuntimeError, subprocess.TimeoutExpired) as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
