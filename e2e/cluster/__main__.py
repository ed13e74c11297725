"""``python -m e2e.cluster build | up | down | status | env``

The local cluster as a command: ``up`` starts it detached (it outlives this
command) and records what it started; ``down`` stops exactly that; ``status``
says what runs; ``env`` prints the line that points kubectl at it.

``up --kuota`` also installs kuota the way a user would have it: the CRDs,
``kuota-webhook`` running detached on 127.0.0.1 with generated certificates,
and the webhook and CRD-conversion configurations registered by URL.  Its
CRDs serve ``v1beta2`` and ``v1beta1``, the chart's default
(docs/api-differences.md#api-versions-served);
``--served-legacy-versions v1alpha1,v1alpha2,v1beta1`` serves the alpha
versions too, as the chart's ``crds.servedLegacyVersions`` does.
``down`` stops the control plane first and the webhook last, so the API
server is never left calling a webhook that is gone.

``up --kuota`` also registers the first scheduler replica's visibility API
(``visibility.kueue.x-k8s.io``, e2e/kuota_visibility.py), so kubectl and
kueuectl (on the ``PATH`` that ``env`` prints, once built) read pending
workloads and their positions.

``up --kuota --multikueue`` also runs ``kuota-multikueue``: the cluster is a
MultiKueue manager (``make demo-multikueue`` starts one and two workers).

``up --jobset`` also runs the real JobSet controller (``jobset.py``): its CRD,
the manager on 127.0.0.1 and its webhooks registered by URL.  ``build``
builds it along with the control plane, and installs Debian's ``chromium``
(when missing), the browser of the dashboard's end-to-end test.  ``up --framework
NAME`` (repeatable) runs another job framework's controller the same way
(``frameworks.py``: LeaderWorkerSet, ...); ``build --frameworks [NAME ...]``
builds them (all when none is named).  Kubeflow Trainer (``--framework
trainer``) makes JobSets, so it comes with ``--jobset`` (started first).

``up --real-node`` runs the cluster in a private network namespace and adds
one real node (containerd, kubelet, kube-proxy) with kuota's image loaded
(e2e.cluster.realnode); ``down`` also undoes what that node changed on the
machine.  ``build --real-node`` also builds the node's tools and the image.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import framework_tools, jobset_tools, kueuectl_tools
from .controlplane import (
    ClusterStartError,
    ControlPlane,
    read_state,
    recorded_processes,
    stop_recorded,
)
from .frameworks import FRAMEWORKS, FrameworkStartError, install_framework
from .jobset import JobSetStartError, install_jobset
from .processes import is_alive
from .tools import ToolPaths, ToolsMissing, build


def state_dir(name: str) -> Path:
    """Where a named cluster started by ``up`` keeps its files."""
    explicit = os.environ.get("KUOTA_CLUSTER_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve() / name
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kuota-cluster" / name


def _running(workdir: Path) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    state = read_state(workdir)
    if state is None:
        return None, [], []
    records = recorded_processes(state)
    alive = [record.name for record in records if is_alive(record)]
    dead = [record.name for record in records if not is_alive(record)]
    return state, alive, dead


def cmd_build(args: argparse.Namespace) -> int:
    build()
    jobset_tools.build()
    wanted = args.frameworks
    for name in (sorted(FRAMEWORKS) if wanted == [] else wanted) or ():
        framework_tools.build(FRAMEWORKS[name].module)
    kueuectl_tools.build()
    from e2e.browser import PACKAGES

    from . import debian

    try:  # the dashboard's end-to-end test reads it in a real browser (e2e/browser.py)
        debian.ensure(PACKAGES)
    except debian.PackagesMissing as failure:
        print(f"error: the browser for the dashboard's tests: {failure}", file=sys.stderr)
        return 1
    if args.real_node:
        from e2e.image.build import build as build_image

        from .node_tools import build as build_node_tools

        build_node_tools()
        build_image()
    return 0


def _up_real_node(args: argparse.Namespace, workdir: Path) -> int:
    from e2e.image.build import ImageBuildError
    from e2e.image.build import build as build_image

    from .node_config import NODE_NAME
    from .realnode import start_cluster

    try:
        info = start_cluster(args.name, workdir, images=[build_image()], die_with_parent=False)
    except (ClusterStartError, ImageBuildError, RuntimeError, OSError) as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    print(f"cluster {args.name!r} is up with the real node {NODE_NAME}: {info.server}")
    print(f"  logs:       {workdir / 'logs'}")
    print(f"  kubeconfig: {info.kubeconfig}")
    print("  images:     kuota:<version> is loaded on the node (imagePullPolicy IfNotPresent)")
    print("  stop it:    python -m e2e.cluster down")
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    workdir = state_dir(args.name)
    state, alive, dead = _running(workdir)
    if state and alive and not dead:
        print(f"cluster {args.name!r} is already running; kubeconfig: {state['kubeconfig']}")
        return 0
    if state:
        print(f"cluster {args.name!r} was left half-running ({', '.join(dead)} gone); cleaning up")
        stop_recorded(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    if args.real_node:
        if args.kuota:
            print(
                "error: --kuota and --real-node do not combine; install the chart", file=sys.stderr
            )
            return 2
        return _up_real_node(args, workdir)
    for name in args.framework or ():
        if "jobset" in FRAMEWORKS[name].needs and not args.jobset:
            print(f"error: --framework {name} needs --jobset (it makes JobSets)", file=sys.stderr)
            return 2
    plane = ControlPlane(
        args.name, tools=ToolPaths.resolve(), workdir=workdir, die_with_parent=False
    )
    jobset = jobset_tools.JobSetTools.resolve() if args.jobset else None
    try:
        info = plane.start()
    except ClusterStartError as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 1
    if jobset is not None:  # first: a framework may build on it (Trainer)
        try:
            jobset_controller = install_jobset(info, workdir, tools=jobset, die_with_parent=False)
        except (JobSetStartError, OSError) as failure:
            print(f"error: starting the JobSet controller failed: {failure}", file=sys.stderr)
            stop_recorded(workdir)
            return 1
        _record(workdir, asdict(jobset_controller.record))
        print(
            f"JobSet is installed: webhooks {jobset_controller.base_url} "
            f"(log {jobset_controller.record.log})"
        )
    for name in args.framework or ():
        try:
            started = install_framework(FRAMEWORKS[name], info, workdir, die_with_parent=False)
        except (FrameworkStartError, ToolsMissing, OSError) as failure:
            print(f"error: starting the {name} controller failed: {failure}", file=sys.stderr)
            stop_recorded(workdir)
            return 1
        _record(workdir, asdict(started.record))
        print(f"{name} is installed: log {started.record.log}")
    if args.kuota:
        from e2e.kuota_install import install_kuota
        from scheduler.api.crds import SERVED_LEGACY_VERSIONS

        try:
            webhook = install_kuota(
                plane.tools.binary("kubectl"),
                info.kubeconfig,
                workdir,
                die_with_parent=False,
                webhook_args=("--multikueue-managed-by",) if args.multikueue else (),
                legacy_versions=(
                    SERVED_LEGACY_VERSIONS
                    if args.served_legacy_versions is None
                    else args.served_legacy_versions
                ),
            )
        except (RuntimeError, OSError) as failure:
            print(f"error: installing kuota failed: {failure}", file=sys.stderr)
            stop_recorded(workdir)
            return 1
        _record(workdir, asdict(webhook.record))
        from e2e.cluster.pki import ClusterPki
        from e2e.kuota_scheduler import start_schedulers

        try:
            replicas = start_schedulers(
                plane.tools.binary("kubectl"),
                info.kubeconfig,
                ClusterPki(workdir / "pki"),
                info.server,
                workdir,
                replicas=args.replicas,
                die_with_parent=False,
            )
        except (RuntimeError, OSError) as failure:
            print(f"error: starting kuota-scheduler failed: {failure}", file=sys.stderr)
            stop_recorded(workdir)
            return 1
        for replica in replicas:
            _record(workdir, asdict(replica.record))
        from e2e.kuota_visibility import register, visibility_certs

        try:  # the first replica's, through an ExternalName Service naming localhost
            register(
                plane.tools.binary("kubectl"),
                info.kubeconfig,
                replicas[0].visibility_port,
                visibility_certs(workdir),
            )
        except RuntimeError as failure:
            print(f"error: registering the visibility API failed: {failure}", file=sys.stderr)
            stop_recorded(workdir)
            return 1
        if args.multikueue:
            from e2e.kuota_multikueue import start_multikueue

            try:
                controller = start_multikueue(
                    plane.tools.binary("kubectl"), info.kubeconfig, workdir, die_with_parent=False
                )
            except (RuntimeError, OSError) as failure:
                print(f"error: starting kuota-multikueue failed: {failure}", file=sys.stderr)
                stop_recorded(workdir)
                return 1
            _record(workdir, asdict(controller.record))
            print(f"  kuota-multikueue: log {controller.record.log}")
        print(f"kuota is installed: webhook {webhook.base_url} (log {webhook.record.log})")
        for replica in replicas:
            print(
                f"  {replica.identity}: {replica.metrics_url} (HTTPS, a metrics reader's "
                f"token: {workdir / 'kuota-metrics-reader.token'}; log {replica.record.log})"
            )
        print(
            f"  visibility API: {replicas[0].identity}'s, registered with the API server "
            "(kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/CQ/"
            "pendingworkloads; kueuectl list workload)"
        )
    print(f"cluster {args.name!r} is up: {info.server}")
    print(f"  logs:       {workdir / 'logs'}")
    print(f"  kubeconfig: {info.kubeconfig}")
    print('  use it:     eval "$(python -m e2e.cluster env)"; kubectl get nodes --show-labels')
    print(f"  kubectl:    {plane.tools.binary('kubectl')}")
    print("  stop it:    python -m e2e.cluster down")
    return 0


def _record(workdir: Path, record: dict[str, Any]) -> None:
    """Add a process started after the control plane to the state ``down`` reads."""
    state = read_state(workdir) or {}
    state.setdefault("processes", []).append(record)
    (workdir / "state.json").write_text(json.dumps(state, indent=2))


def cmd_down(args: argparse.Namespace) -> int:
    workdir = state_dir(args.name)
    stopped = stop_recorded(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    print(
        f"cluster {args.name!r}: stopped "
        f"{', '.join(stopped) if stopped else 'nothing (not running)'}"
    )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state, alive, dead = _running(state_dir(args.name))
    if state is None:
        print(f"cluster {args.name!r}: not running")
        return 1
    print(f"cluster {args.name!r}: {state['server']}  kubeconfig: {state['kubeconfig']}")
    for name in alive:
        print(f"  {name:<24} running")
    for name in dead:
        print(f"  {name:<24} NOT RUNNING")
    return 0 if not dead else 1


def cmd_env(args: argparse.Namespace) -> int:
    state = read_state(state_dir(args.name))
    if state is None or not state.get("kubeconfig"):
        print(
            f"cluster {args.name!r} is not running; start it with: python -m e2e.cluster up",
            file=sys.stderr,
        )
        return 1
    tools = ToolPaths.resolve(build_if_missing=False)
    print(f"export KUBECONFIG={state['kubeconfig']}")
    kueuectl = kueuectl_tools.binary_path(kueuectl_tools.version_dir())
    extra = (
        f"{kueuectl.parent}:" if kueuectl_tools.is_complete(kueuectl_tools.version_dir()) else ""
    )
    print(f"export PATH={tools.bin}:{extra}$PATH")
    return 0


def _versions(text: str) -> tuple[str, ...]:
    from scheduler.api.crds import LEGACY_VERSIONS

    chosen = tuple(item.strip() for item in text.split(",") if item.strip())
    unknown = sorted(set(chosen) - set(LEGACY_VERSIONS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown versions {', '.join(unknown)}: choose among {', '.join(LEGACY_VERSIONS)}"
        )
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m e2e.cluster",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--name", default="kuota", help="cluster name (default: kuota)")
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser(
        "build", help="build the pinned control-plane tools into the cache"
    )
    build_command.add_argument(
        "--real-node",
        action="store_true",
        help="also the real node's tools (kubelet, kube-proxy, pause) and kuota's image",
    )
    build_command.add_argument(
        "--frameworks",
        nargs="*",
        choices=sorted(FRAMEWORKS),
        metavar="NAME",
        help="also the controllers of these job frameworks (all when none is named: "
        + ", ".join(sorted(FRAMEWORKS))
        + ")",
    )
    build_command.set_defaults(run=cmd_build)
    up = commands.add_parser("up", help="start the local cluster (detached)")
    up.add_argument(
        "--kuota",
        action="store_true",
        help="also install kuota: CRDs, the webhook on 127.0.0.1, webhook and conversion "
        "registrations, and the scheduler",
    )
    up.add_argument(
        "--jobset",
        action="store_true",
        help="also run the real JobSet controller: its CRD, the manager on 127.0.0.1 and its "
        "webhooks registered by URL",
    )
    up.add_argument(
        "--framework",
        action="append",
        choices=sorted(FRAMEWORKS),
        metavar="NAME",
        help="also run this job framework's real controller (repeatable): its CRDs, the "
        "manager on 127.0.0.1 and its webhooks by URL (" + ", ".join(sorted(FRAMEWORKS)) + ")",
    )
    up.add_argument(
        "--multikueue",
        action="store_true",
        help="with --kuota: also run kuota-multikueue (this cluster is a MultiKueue manager)",
    )
    up.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="with --kuota: scheduler replicas (leader election through a Lease; default 1)",
    )
    up.add_argument(
        "--served-legacy-versions",
        type=_versions,
        default=None,
        metavar="V1,V2",
        help="with --kuota: the kueue.x-k8s.io versions served besides v1beta2 (the chart's "
        "crds.servedLegacyVersions), comma-separated, '' for none; default: the chart's, "
        "v1beta1 (add v1alpha1,v1alpha2 to apply legacy manifests unconverted)",
    )
    up.add_argument(
        "--real-node",
        action="store_true",
        help="run the cluster in a private network namespace with one real node "
        "(containerd, kubelet, kube-proxy) that has kuota's image",
    )
    up.set_defaults(run=cmd_up)
    commands.add_parser("down", help="stop everything `up` started").set_defaults(run=cmd_down)
    commands.add_parser("status", help="show which components run").set_defaults(run=cmd_status)
    commands.add_parser("env", help="print `export KUBECONFIG=...`").set_defaults(run=cmd_env)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except ToolsMissing as missing:
        print(f"error: {missing}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
