"""``kuota explain JOB``: why a Job waits, and what would have to free up.

The explanation is the scheduling engine's, not a second opinion: the
cluster's objects are loaded into a local ``Engine`` exactly as ``kuota
simulate`` loads manifests (``scheduler.cli.live``; admitted Workloads count
against quota from their status), and the engine runs its cycles until
nothing changes (bounded).  One cycle only examines the head of every
ClusterQueue; running to the steady state gives every pending Workload the
message the live scheduler would give it.  Evictions the engine decides are
not carried out (the victims keep their quota), so a preemptor reads
"Pending the preemption of ...", as it does on the cluster meanwhile.

What the user reads, for a pending Workload:

1. where it is queued (LocalQueue -> ClusterQueue);
2. its position among the pending Workloads of that ClusterQueue, in the
   engine's queue order (priority, then age: ``WorkloadRecord.queue_order``);
3. the engine's pending message, verbatim;
4. what would have to free up, from the structure the engine rendered that
   message from (``Pending.shortages``): for every shortage the amount, the
   flavor's use against its quota, and the admitted Workloads that hold it;
   plus the blockers nothing can free up (``Pending.blockers``: a request
   above the maximum capacity, an untolerated taint, a resource without
   quota).  Nothing is parsed back out of the message.

An admitted Workload says where (ClusterQueue, flavors) and since when (the
``Admitted`` or ``QuotaReserved`` condition); a finished one says how it
ended.  ``explain_target`` finds what the target names; a job with several
Workloads (a LeaderWorkerSet, one per replica) is explained Workload by
Workload.  Everything but the fetch is pure.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import yaml

from scheduler.api.config import Configuration, WaitForPodsReady, parse_configuration
from scheduler.api.parse import ObjectParseError
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.cli.explain_status import backoff_lines, check_lines, placement_lines, timer_lines
from scheduler.cli.explain_target import Target, every_target, find_target, kind_of
from scheduler.cli.listing import admission, flavors_text, workload_state
from scheduler.cli.live import (
    ClusterFetcher,
    ClusterObjects,
    add_connection_arguments,
    age,
    chosen_namespace,
    condition,
    fetch,
    key_of,
    metadata,
    new_live_engine,
    owner_job_uid,
    parse_time,
    utc_now,
)
from scheduler.core.engine import Engine
from scheduler.core.pending_reasons import (
    Blocker,
    ExceedsMaximum,
    ResourceUnavailable,
    Shortage,
    TopologyUnplaced,
    UntoleratedTaint,
)
from scheduler.core.resources import format_quantity
from scheduler.jobs import (
    for_object,
)
from scheduler.jobs.start_placement import live_pod_count

EXIT_OK, EXIT_NOT_FOUND = 0, 1
MAX_CYCLES = 200
MAX_HOLDERS = 5


def hard_blockers(blockers: Sequence[Blocker]) -> list[str]:
    """What no release of quota can cure, in words: maxima exceeded, then taints, then resources.

    Affinity mismatches and missing flavors are named by the pending message
    alone.  Pure.
    """
    lines: list[str] = []
    for blocker in blockers:
        if isinstance(blocker, ExceedsMaximum):
            earlier = (
                f" (plus {blocker.earlier} for earlier pod sets)"
                if not blocker.earlier.is_zero()
                else ""
            )
            lines.append(
                f"{blocker.resource} in flavor {blocker.flavor}: it asks for {blocker.request}"
                f"{earlier} but the ClusterQueue can never have more than {blocker.maximum} "
                "there; only a larger quota helps"
            )
    for blocker in blockers:
        if isinstance(blocker, UntoleratedTaint):
            lines.append(
                f"flavor {blocker.flavor} has the taint {blocker.taint_text}, which the Job does "
                "not tolerate; add a toleration to use it"
            )
    for blocker in blockers:
        if isinstance(blocker, ResourceUnavailable):
            lines.append(f"the ClusterQueue has no quota at all for {blocker.resource}")
    for blocker in blockers:
        if isinstance(blocker, TopologyUnplaced) and not blocker.with_preemption:
            lines.append(
                f"{topology_words(blocker)}, even with every workload placed by topology "
                "gone; only more (or larger) nodes help"
            )
    return lines


def topology_words(blocker: TopologyUnplaced) -> str:
    """A failed placement in words: ``needs 8 pods in one rack; the largest rack has room
    for 6`` (the pending message has Kueue's wording): pure."""
    level = (blocker.level or "").rsplit("/", 1)[-1]
    if blocker.needed is None or blocker.fits is None or not level:
        return f"its pods do not fit the topology of flavor {blocker.flavor} ({blocker.text})"
    units = blocker.unit if blocker.needed == 1 else f"{blocker.unit}s"
    if blocker.in_one:
        return (
            f"needs {blocker.needed} {units} in one {level}; the largest {level} of flavor "
            f"{blocker.flavor} has room for {blocker.fits}"
        )
    return (
        f"needs {blocker.needed} {units} in flavor {blocker.flavor}'s topology; its nodes have "
        f"room for {blocker.fits}"
    )


# --- the explanation ------------------------------------------------------------------


def _display(workload_key: str, owners: Mapping[str, str]) -> str:
    return owners.get(workload_key, f"workload/{workload_key.split('/', 1)[1]}")


def _owner_names(objects: ClusterObjects) -> dict[str, str]:
    """Workload key -> ``job/NAME`` (``jobset/NAME``) of its job (no ``namespace/``): pure."""
    jobs = {
        metadata(j).get("uid"): f"{kind_of(j).lower()}/{metadata(j).get('name')}"
        for j in objects.jobs
    }
    names = {}
    for workload in objects.workloads:
        uid = owner_job_uid(workload)
        if uid in jobs:
            names[key_of(workload)] = jobs[uid]
    return names


def _holders(
    engine: Engine,
    cluster_queue: str,
    shortage: Shortage,
    owners: Mapping[str, str],
    live_admitted: set[str],
) -> list[str]:
    """Admitted Workloads of ``cluster_queue`` using ``shortage``'s FR, biggest first: pure.

    They use ``shortage``'s flavor for its resource.  One the engine admitted
    on its own run but the cluster has not yet is marked "being admitted".
    """
    found = []
    for key in engine.view.workload_keys():
        state = engine.view.workload_state(key)
        if state.state != "Admitted" or state.cluster_queue != cluster_queue:
            continue
        total = None
        for pod_set in state.admission:
            if (
                pod_set.flavors.get(shortage.resource) == shortage.flavor
                and shortage.resource in pod_set.resource_usage
            ):
                amount = pod_set.resource_usage[shortage.resource]
                total = amount if total is None else total + amount
        if total is not None:
            found.append((total, key))
    found.sort(key=lambda item: (-item[0].milli_value(), item[1]))
    return [
        f"{_display(key, owners)} ({format_quantity(shortage.resource, amount)}"
        f"{'' if key in live_admitted else ', being admitted'})"
        for amount, key in found
    ]


def _quota_text(engine: Engine, cluster_queue: Mapping[str, Any] | None, shortage: Shortage) -> str:
    if cluster_queue is None:
        return ""
    name = str(metadata(cluster_queue).get("name"))
    used = (
        engine.view.cluster_queue_status(name).usage.get(shortage.flavor, {}).get(shortage.resource)
    )
    nominal = None
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            if flavor.get("name") == shortage.flavor:
                for resource in flavor.get("resources") or []:
                    if resource.get("name") == shortage.resource:
                        nominal = resource.get("nominalQuota")
    if used is None or nominal is None:
        return ""
    return f" (in use: {format_quantity(shortage.resource, used)} of {nominal})"


def _heading(target: Target, workload_key: str | None) -> str:
    if target.job is not None:
        job_meta = metadata(target.job)
        text = f"{kind_of(target.job)} {job_meta.get('namespace')}/{job_meta.get('name')}"
        if workload_key is not None:
            text += f" (Workload {workload_key.split('/', 1)[1]})"
        return text
    return f"Workload {workload_key}"


def _admitted_lines(
    workload: Mapping[str, Any],
    state: str,
    now: datetime,
    settings: WaitForPodsReady | None = None,
) -> list[str]:
    """Where and since when, from the live status, and its clocks: pure."""
    cluster_queue = admission(workload).get("clusterQueue") or "-"
    since = (
        condition(workload, "Admitted")
        if state == "Admitted"
        else condition(workload, "QuotaReserved")
    )
    moment = parse_time((since or {}).get("lastTransitionTime"))
    when = (
        f" since {moment.strftime('%Y-%m-%dT%H:%M:%SZ')} ({age(moment, now)} ago)" if moment else ""
    )
    word = (
        "is admitted" if state == "Admitted" else "holds quota (waiting for its admission checks)"
    )
    lines = [
        f"It {word} in ClusterQueue {cluster_queue}{when}.",
        f"Flavors: {flavors_text(workload)}",
    ]
    lines += placement_lines(workload)
    if state != "Admitted":
        lines += check_lines(workload)
    return lines + timer_lines(workload, settings, now)


def explain_workload(
    objects: ClusterObjects,
    target: Target,
    now: datetime,
    notes: list[str] | None = None,
    *,
    config: Configuration | None = None,
) -> list[str]:
    """The explanation of ``target`` against the picture ``objects`` at ``now``, as lines: pure.

    ``config``: the Configuration the scheduler runs with (its waitForPodsReady
    settings; None: Kueue's defaults).
    """
    notes = notes if notes is not None else []
    settings = wait_for_pods_ready(config)
    engine: Engine
    engine, cluster, clock = new_live_engine(objects, now, notes)
    workload = target.workload
    key = key_of(workload) if workload is not None else None
    if key is None and target.job is not None:
        key = _predicted_key(cluster, str(metadata(target.job).get("uid")))
    lines = [_heading(target, key) + ":"]
    if workload is not None:
        state = workload_state(workload)
        if state in ("Admitted", "QuotaReserved"):
            return lines + _admitted_lines(workload, state, now, settings)
        if state == "Finished":
            finished = condition(workload, "Finished") or {}
            moment = parse_time(finished.get("lastTransitionTime"))
            when = f" {age(moment, now)} ago" if moment else ""
            return lines + [
                f"It finished{when} ({finished.get('reason') or 'Finished'}): "
                f"{finished.get('message') or 'no message'}"
            ]
        if state == "Evicted":
            return (
                lines
                + _evicted_lines(workload, target.job, objects.pods)
                + backoff_lines(workload, settings, now)
            )
        lines += backoff_lines(workload, settings, now)
    elif target.job is not None:
        lines.append(
            "The scheduler has not created its Workload yet; this is what it would decide."
        )
    if key is None or not engine.view.has_workload(key):
        return lines + [
            "kuota does not know this Job: is it suspended and labelled kueue.x-k8s.io/queue-name?"
        ]
    engine.run_until_steady(clock, max_cycles=MAX_CYCLES)
    return lines + _pending_lines(engine, objects, key)


def _evicted_lines(
    workload: Mapping[str, Any], job: Mapping[str, Any] | None, pods: list[dict[str, Any]]
) -> list[str]:
    """An evicted Workload: why, and how many pods of its job must still stop: pure.

    The quota is released only once the job runs nothing: its pods as listed
    (those kuota labelled with the job's UID) and its own counters.
    """
    evicted = condition(workload, "Evicted") or {}
    first = f"It is evicted ({evicted.get('reason')}): {evicted.get('message')}"
    uid = str(metadata(job).get("uid") or "") if job is not None else ""
    integration = for_object(job) if job is not None else None
    counted = integration.active(job) if integration is not None and job is not None else 0
    stopping = max(live_pod_count(pods, uid) if uid else 0, counted)
    if stopping:
        noun = "pod" if stopping == 1 else "pods"
        return [f"{first}; waiting for {stopping} {noun} to stop before the quota is released."]
    return [first, "Nothing of it runs any more: its quota is released next, then it queues again."]


def _predicted_key(cluster: Any, job_uid: str) -> str | None:
    for item in cluster.objects:
        if (
            getattr(item, "kind", None) == "Workload"
            and item.metadata.labels.get("kueue.x-k8s.io/job-uid") == job_uid
        ):
            return str(item.key)
    return None


def _pending_lines(engine: Engine, objects: ClusterObjects, key: str) -> list[str]:
    state = engine.view.workload_state(key)
    queue = state.local_queue or "-"
    if state.state == "Admitted":
        flavors = "; ".join(
            f"{ps.name}: " + ", ".join(f"{r}={f}" for r, f in ps.flavors.items())
            for ps in state.admission
        )
        return [
            f"It is pending in LocalQueue {queue} -> ClusterQueue {state.cluster_queue}, "
            f"and it fits now ({flavors}): the scheduler's next cycle should admit it."
        ]
    cluster_queue = state.cluster_queue
    if cluster_queue is None:
        return [f"It is not queued ({state.reason}): {state.message}"]
    lines = [f"It is pending in LocalQueue {queue} -> ClusterQueue {cluster_queue}."]
    position = engine.view.queue_position(key)
    if position is not None:
        lines.append(
            f"Position: {position[0]} of {position[1]} pending in ClusterQueue {cluster_queue} "
            "(queue order: priority, then age)."
        )
    message = state.message or "not examined yet"
    lines.append(f"Why ({state.reason or 'Pending'}): {message}")
    owners = _owner_names(objects)
    live_admitted = {
        key_of(w)
        for w in objects.workloads
        if workload_state(w) in ("Admitted", "QuotaReserved", "Evicted")
    }
    raw_queue = next(
        (cq for cq in objects.cluster_queues if metadata(cq).get("name") == cluster_queue), None
    )
    missing = state.shortages
    if missing:
        lines.append(
            "To be admitted, one of these has to free up:"
            if len(missing) > 1
            else "To be admitted, this has to free up:"
        )
        for shortage in missing:
            text = f"  - {shortage.amount} {shortage.resource} in flavor {shortage.flavor}"
            text += _quota_text(engine, raw_queue, shortage)
            holders = _holders(engine, cluster_queue, shortage, owners, live_admitted)
            if holders:
                shown = ", ".join(holders[:MAX_HOLDERS])
                more = (
                    f" and {len(holders) - MAX_HOLDERS} more" if len(holders) > MAX_HOLDERS else ""
                )
                text += f"; held by {shown}{more}"
            lines.append(text)
    waits = [b for b in state.blockers if isinstance(b, TopologyUnplaced) and b.with_preemption]
    if waits:
        lines.append("To be admitted, room has to free up in its topology:")
        lines.extend(
            f"  - {topology_words(blocker)} (workloads placed there hold the rest)"
            for blocker in waits
        )
    blockers = hard_blockers(state.blockers)
    if blockers:
        lines.append("Not curable by waiting:" if not missing and not waits else "Also:")
        lines.extend(f"  - {blocker}" for blocker in blockers)
    return lines


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "explain",
        help="why a Job waits: its place in the queue, what blocks it, what has to free up",
        description="Read the cluster through your kubeconfig, run kuota's scheduling engine on it "
        "locally (nothing is written), and explain one Job: its position in its ClusterQueue, the "
        "resource and flavor that block it and how much has to free up; or where and since when it "
        "was admitted. TARGET is JOB, KIND/NAME (job, jobset, leaderworkerset, ...) or "
        "workload/NAME.",
    )
    parser.add_argument(
        "target",
        metavar="TARGET",
        help="JOB, KIND/NAME (job/NAME, jobset/NAME, ...) or workload/NAME",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the Configuration the scheduler runs with (its waitForPodsReady timeouts and "
        "backoff); default: Kueue's defaults",
    )
    add_connection_arguments(parser, namespaced=True, all_namespaces=False)
    parser.set_defaults(run=run)


def _configuration(path: str | None, stderr: TextIO) -> Configuration | None | str:
    """The ``--config`` file, None without one, or the error to print (reads the file)."""
    if not path:
        return None
    try:
        return parse_configuration(yaml.safe_load(Path(path).read_text()))
    except (OSError, yaml.YAMLError, ObjectParseError) as failure:
        return f"cannot read the Configuration {path}: {failure}"


def run(
    args: argparse.Namespace,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    fetcher: ClusterFetcher | None = None,
) -> int:
    objects, kubeconfig = fetch(args, stderr, fetcher)
    if objects is None:
        return EXIT_NOT_FOUND
    namespace = chosen_namespace(args, kubeconfig) or "default"
    target = find_target(objects, args.target, namespace)
    if isinstance(target, str):
        print(f"error: {target}", file=stderr)
        return EXIT_NOT_FOUND
    config = _configuration(getattr(args, "config", None), stderr)
    if isinstance(config, str):
        print(f"error: {config}", file=stderr)
        return EXIT_NOT_FOUND
    notes: list[str] = []
    lines: list[str] = []
    for each in every_target(objects, target):
        if lines:
            lines.append("")
        lines += explain_workload(objects, each, utc_now(), notes, config=config)
    for note in notes:
        print(f"note: {note}", file=stderr)
    stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


__all__ = ["explain_workload", "hard_blockers"]
