"""``kuota stop`` and ``kuota resume``: hold and release queues and workloads.

See docs/concepts.md#stop-policies and docs/validation.md#kuota-stop-and-kuota-resume.
The same changes kueuectl makes, with kuota's habits for commands that write:

- ``stop clusterqueue NAME`` / ``stop localqueue NAME``: ``spec.stopPolicy:
  HoldAndDrain`` (nothing new is admitted, the admitted Workloads are evicted
  and their jobs suspended), or ``Hold`` with ``--keep-already-running``
  (they finish); ``resume``: ``None``.
- ``stop workload NAME`` / ``stop job NAME`` (the Job's Workload):
  ``spec.active: false`` (it leaves its queue; an admitted one releases its
  quota once its job is suspended); ``resume``: ``active: true``.
- The command reads the object first and says what the change does, in
  numbers (how many admitted Workloads a drain evicts); ``stop`` asks before
  writing (``Proceed? [y/N]``, anything but ``y`` cancels, exit 1) unless
  ``--yes``; ``resume`` undoes a stop and asks nothing.  ``--dry-run``
  prints the same and writes nothing.  A change that is already in place is
  reported and not written.
- The write is a merge patch carrying the ``resourceVersion`` that was read,
  so a change made meanwhile by someone else is not overwritten: the command
  fails and says to run it again.

Deciding is pure (:func:`plan`); the one adapter that writes is
:mod:`scheduler.cli.cluster_writer`, through the user's kubeconfig and rights.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from scheduler.api import objects
from scheduler.api.refs import QUOTA_RESERVED
from scheduler.cli.live import add_connection_arguments, chosen_namespace, kubeconfig_path

EXIT_OK, EXIT_FAILED = 0, 1
Action = Literal["stop", "resume"]
KINDS = {
    "clusterqueue": "clusterqueue",
    "clusterqueues": "clusterqueue",
    "cq": "clusterqueue",
    "localqueue": "localqueue",
    "localqueues": "localqueue",
    "lq": "localqueue",
    "workload": "workload",
    "workloads": "workload",
    "wl": "workload",
    "job": "job",
    "jobs": "job",
}
"""What a user may type -> the kind it names (kueuectl's names and short names, and Job)."""
TITLES = {"clusterqueue": "ClusterQueue", "localqueue": "LocalQueue", "workload": "Workload"}


@dataclass(frozen=True)
class Plan:
    """What one command will change, and what that does."""

    target: str
    """``clusterqueue/NAME``, ``localqueue/NS/NAME`` or ``workload/NS/NAME``."""
    patch: dict[str, Any] | None
    """The merge patch (with the resourceVersion read); None when nothing is to change."""
    change: str
    """``stopPolicy: None -> HoldAndDrain`` / ``active: true -> false``."""
    effects: tuple[str, ...]
    confirm: bool
    done: str
    """What the command says once the change is written."""


def _queue_plan(action: Action, kind: str, obj: Mapping[str, Any], keep_running: bool) -> Plan:
    name, namespace = objects.name(obj), objects.namespace(obj)
    title = TITLES[kind]
    target = f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"
    current = str(objects.spec(obj).get("stopPolicy") or "None")
    wanted = "None" if action == "resume" else ("Hold" if keep_running else "HoldAndDrain")
    status = objects.status(obj)
    running = int(status.get("reservingWorkloads") or status.get("admittedWorkloads") or 0)
    pending = int(status.get("pendingWorkloads") or 0)
    undo = f"kuota resume {kind} {name}" + (f" -n {namespace}" if namespace else "")
    effects: tuple[str, ...]
    if wanted == "HoldAndDrain":
        effects = (
            f"{title} {name} admits nothing new ({pending} pending wait).",
            f"Its {running} admitted Workload(s) are evicted and their jobs suspended;"
            " they wait in the queue again.",
            f"Undo with: {undo}",
        )
    elif wanted == "Hold":
        effects = (
            f"{title} {name} admits nothing new ({pending} pending wait).",
            f"Its {running} admitted Workload(s) keep running until they finish.",
            f"Undo with: {undo}",
        )
    else:
        effects = (f"{title} {name} admits again ({pending} pending).",)
    patch = (
        None
        if current == wanted
        else {
            "metadata": {"resourceVersion": objects.resource_version(obj)},
            "spec": {"stopPolicy": wanted},
        }
    )
    verb = "stopped" if action == "stop" else "resumed"
    return Plan(
        target=target,
        patch=patch,
        change=f"stopPolicy: {current} -> {wanted}",
        effects=effects,
        confirm=action == "stop",
        done=f"{target} {verb} (stopPolicy: {wanted})",
    )


def _workload_plan(action: Action, obj: Mapping[str, Any]) -> Plan:
    name, namespace = objects.name(obj), objects.namespace(obj)
    target = f"workload/{namespace}/{name}"
    active = not objects.is_deactivated(obj)
    wanted = action == "resume"
    admission = objects.admission(obj) or {}
    holding = objects.is_true(obj, QUOTA_RESERVED)
    cluster_queue = admission.get("clusterQueue")
    if action == "stop":
        effects: tuple[str, ...] = (
            (
                f"Workload {name} holds quota in ClusterQueue {cluster_queue}: its job is"
                " suspended and the quota released.",
            )
            if holding
            else (f"Workload {name} leaves its queue; it is not admitted while stopped.",)
        ) + (f"Undo with: kuota resume workload {name} -n {namespace}",)
    else:
        effects = (f"Workload {name} waits in its queue again (queue order: priority, then age).",)
    patch = (
        None
        if active == wanted
        else {
            "metadata": {"resourceVersion": objects.resource_version(obj)},
            "spec": {"active": wanted},
        }
    )
    verb = "stopped" if action == "stop" else "resumed"
    return Plan(
        target=target,
        patch=patch,
        change=f"active: {str(active).lower()} -> {str(wanted).lower()}",
        effects=effects,
        confirm=action == "stop",
        done=f"{target} {verb} (active: {str(wanted).lower()})",
    )


def plan(action: Action, kind: str, obj: Mapping[str, Any], *, keep_running: bool = False) -> Plan:
    """What ``kuota <action> <kind>`` does to ``obj`` (as read): pure."""
    if kind == "workload":
        return _workload_plan(action, obj)
    return _queue_plan(action, kind, obj, keep_running)


# --- the cluster side ------------------------------------------------------------------------


class ControlFailed(Exception):
    """The object cannot be read or changed; the message is the user's answer."""


class Cluster(Protocol):
    """What the commands need of a cluster (:mod:`scheduler.cli.cluster_writer`)."""

    def read(self, kind: str, name: str, namespace: str | None) -> dict[str, Any]: ...

    def workload_of_job(self, name: str, namespace: str) -> dict[str, Any]: ...

    def patch(
        self, kind: str, name: str, namespace: str | None, body: Mapping[str, Any]
    ) -> dict[str, Any]: ...


ClusterFactory = Callable[[str], Cluster]
"""Connects through the kubeconfig at the given path."""


def _connect(path: str) -> Cluster:
    from scheduler.cli.cluster_writer import KubeCluster

    return KubeCluster(path)


def _confirmed(stdin: TextIO, stdout: TextIO) -> bool:
    stdout.write("Proceed? [y/N] ")
    stdout.flush()
    answer = stdin.readline()
    if not stdin.isatty():  # the answer was not echoed on the terminal
        stdout.write("\n")
    return answer.strip().lower() in ("y", "yes")


def run(
    args: argparse.Namespace,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    connect: ClusterFactory | None = None,
) -> int:
    action: Action = args.command
    kind = KINDS[args.kind.lower()]
    kubeconfig = kubeconfig_path(args.kubeconfig, os.environ, Path.home())
    namespace = None if kind == "clusterqueue" else chosen_namespace(args, kubeconfig) or "default"
    if args.keep_already_running and kind not in ("clusterqueue", "localqueue"):
        print("error: --keep-already-running applies to queues only", file=stderr)
        return EXIT_FAILED
    try:
        cluster = (connect or _connect)(kubeconfig)
        if kind == "job":
            assert namespace is not None
            obj = cluster.workload_of_job(args.name, namespace)
            kind = "workload"
        else:
            obj = cluster.read(kind, args.name, namespace)
        chosen = plan(action, kind, obj, keep_running=args.keep_already_running)
        if chosen.patch is None:
            stdout.write(f"{chosen.target}: nothing to do ({chosen.change.split(' -> ')[1]})\n")
            return EXIT_OK
        stdout.write(f"{chosen.target}: {chosen.change}\n")
        stdout.writelines(f"  {line}\n" for line in chosen.effects)
        if args.dry_run:
            stdout.write("dry run: nothing changed\n")
            return EXIT_OK
        if chosen.confirm and not args.yes and not _confirmed(stdin, stdout):
            stdout.write("canceled: nothing changed\n")
            return EXIT_FAILED
        cluster.patch(kind, objects.name(obj), namespace, chosen.patch)
    except ControlFailed as failed:
        print(f"error: {failed}", file=stderr)
        return EXIT_FAILED
    stdout.write(chosen.done + "\n")
    return EXIT_OK


def add_parsers(commands: Any) -> None:
    for action, summary in (
        ("stop", "hold a ClusterQueue or LocalQueue (drain it, or keep what runs), or a Workload"),
        ("resume", "undo a stop: the queue admits again, the Workload waits in line again"),
    ):
        parser = commands.add_parser(
            action,
            help=summary,
            description=f"{summary[0].upper()}{summary[1:]}. Writes through your kubeconfig, "
            "with your rights; says what the change does first"
            + ("; asks before writing unless --yes." if action == "stop" else "."),
        )
        parser.add_argument(
            "kind",
            metavar="KIND",
            choices=sorted(KINDS),
            help="clusterqueue (cq), localqueue (lq), workload (wl), or job (its Workload)",
        )
        parser.add_argument("name", metavar="NAME")
        add_connection_arguments(parser, namespaced=True, all_namespaces=False)
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would change, write nothing"
        )
        if action == "stop":
            parser.add_argument(
                "--keep-already-running",
                action="store_true",
                help="queues: Hold instead of HoldAndDrain (admitted Workloads keep running)",
            )
            parser.add_argument("-y", "--yes", action="store_true", help="do not ask")
        else:
            parser.set_defaults(keep_already_running=False, yes=True)
        parser.set_defaults(run=run)


__all__ = ["KINDS", "ControlFailed", "Plan", "add_parsers", "plan", "run"]
