"""``python -m e2e.kueue_suites build | list | run``: Kueue's e2e suites against kuota.

``run`` (``make test-kueue-e2e``): for each suite (``--suites``, default
singlecluster/baseline and sequential/baseline), list its specs with a dry run
of its binary (all of them, then those the filters select), start a fresh local
cluster shaped as the suite expects with kuota's Kueue-compatible install
(:mod:`.environment`), run the binary against it with a JUnit report, stop the
cluster; then print one table and write every spec's outcome, with the date,
the commit and the command, to one file per suite,
``e2e/kueue_suites/results/<suite>.md`` (``singlecluster-baseline.md``), so a
run of one suite keeps the others' records; ``--results`` names one file for
the whole run instead.  ``--focus`` is passed to Ginkgo (``--ginkgo.focus``); a
run with a focus writes its results to ``build/kueue-e2e/RESULTS.md`` unless
told otherwise, so a partial run never replaces a recorded one.

The exit status is 0 when every suite produced a report, whatever the specs'
outcomes: the figures are the result.  ``--strict`` makes any failed spec fail.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from . import report
from .environment import kuota_image
from .junit import SuiteReport, gist, parse
from .suites import DEFAULTS, parse_suites
from .tools import SUITES, KueueE2ETools

PACKAGE = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE.parents[1]
RESULTS_DIR = PACKAGE / "results"
OUT = REPO_ROOT / "build" / "kueue-e2e"


def load_exclusions() -> tuple[report.Exclusion, ...]:
    return report.load_exclusions(yaml.safe_load((PACKAGE / "exclusions.yaml").read_text()))


def load_causes() -> tuple[report.Cause, ...]:
    return report.load_causes(yaml.safe_load((PACKAGE / "causes.yaml").read_text()))


@dataclass(frozen=True)
class Filters:
    focus: str = ""
    label_filter: str = ""
    skip: str = ""

    def ginkgo_args(self) -> list[str]:
        args = []
        if self.focus:
            args.append(f"--ginkgo.focus={self.focus}")
        if self.label_filter:
            args.append(f"--ginkgo.label-filter={self.label_filter}")
        if self.skip:
            args.append(f"--ginkgo.skip={self.skip}")
        return args


def _binary(tools: KueueE2ETools, suite: str, args: list[str], **kwargs: object) -> int:
    done = subprocess.run(
        [str(tools.suite_binary(suite)), "-test.timeout=0", *args],
        cwd=tools.suite_dir(suite),
        **kwargs,  # type: ignore[call-overload]
    )
    return int(done.returncode)


def dry_run(tools: KueueE2ETools, suite: str, filters: Filters, out: Path) -> tuple[str, ...]:
    """The specs ``filters`` select, by a dry run (nothing is run, no cluster needed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    code = _binary(
        tools,
        suite,
        ["--ginkgo.dry-run", f"--ginkgo.junit-report={out}", *filters.ginkgo_args()],
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(out.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if not out.is_file():
        raise RuntimeError(f"{suite}: the dry run wrote no report (exit {code})")
    listed = parse(out.read_text())
    return tuple(
        report.numbered(o.name for o in listed.specs if o.passed)
    )  # a dry run "passes" what it selects


def run_binary(
    tools: KueueE2ETools, suite: str, filters: Filters, *, kubeconfig: Path, out: Path
) -> tuple[SuiteReport | None, str, float]:
    """Run one suite's binary against the cluster of ``kubeconfig``: (report, error, seconds).

    ``error`` says why the report is missing or incomplete (a crash, a timeout, a
    failed BeforeSuite); the report is None when the binary wrote none.
    """
    from .environment import suite_env

    out.mkdir(parents=True, exist_ok=True)
    junit = out / "junit.xml"
    junit.unlink(missing_ok=True)
    log = out / "run.log"
    timeout = DEFAULTS[suite].timeout_minutes
    home = out / "home"
    (home / "artifacts").mkdir(parents=True, exist_ok=True)
    error = ""
    started = time.monotonic()
    with open(log, "w") as handle:
        try:
            code = _binary(
                tools,
                suite,
                [
                    "-test.v",
                    f"--ginkgo.junit-report={junit}",
                    f"--ginkgo.timeout={timeout}m",
                    "--ginkgo.no-color",
                    "--ginkgo.v",
                    *filters.ginkgo_args(),
                ],
                env=suite_env(kubeconfig, home),
                stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=(timeout + 10) * 60,
            )
        except subprocess.TimeoutExpired:
            code = -1
            error = f"the suite binary did not end within {timeout + 10} minutes"
    seconds = time.monotonic() - started
    if not junit.is_file():
        return None, error or f"the suite binary wrote no JUnit report (exit {code})", seconds
    parsed = parse(junit.read_text())
    failures = parsed.suite_node_failures()
    if failures:
        error = "; ".join(
            f"[{node.node}] failed at {node.location}: {gist(node.message, 400)}"
            for node in failures
        )
    if parsed.special_failures:
        error = "; ".join(filter(None, [error, *parsed.special_failures]))
    return parsed, error, seconds


def run_suite(
    tools: KueueE2ETools,
    suite: str,
    filters: Filters,
    *,
    images: tuple[Path, ...],
    out: Path,
    keep: bool,
) -> tuple[SuiteReport | None, str, float]:
    """Run one suite against a fresh cluster; (report, error, seconds of the binary's run)."""
    from .environment import running  # needs the cluster tools

    with running(
        suite, images=images, keep=keep, operators=DEFAULTS[suite].operators
    ) as environment:
        print(
            f"[kueue-e2e] {suite}: kuota installed in {environment.install_seconds:.0f}s; "
            f"running the suite (log: {out / 'run.log'})",
            flush=True,
        )
        return run_binary(tools, suite, filters, kubeconfig=environment.cluster.kubeconfig, out=out)


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


ENVIRONMENT = """\
## Environment

Kueue v0.19.2's suites, built from its Go module (`go test -c`, `e2e/kueue_suites/tools.py`),
run unchanged against a local cluster (Kubernetes v1.36.3 built from its modules): kuota's
chart with `kueueCompatible: true` (`e2e/kueue_suites/values.yaml`) in `kueue-system`, its
image (`make image`) running on the cluster's one real node (containerd + kubelet in a
private network namespace; the API server calls the webhook through `kueue-webhook-service`).
The suites' workloads run on kwok worker nodes named and labelled as Kueue's kind cluster's
(`kind-worker`: `instance-type: on-demand`, `kind-worker2`: `instance-type: spot`; the TAS
suite's eight `kind-worker*` by block and rack), 8 CPUs and 32 GiB each.

**Pods: kwok stages keyed on the agnhost arguments, not agnhost images.** The specs choose
what a container does by agnhost's first argument: `entrypoint-tester` exits 0 at once,
`netexec` serves until deleted and exits 0 on SIGTERM, `test-webserver` serves until
deleted and dies of SIGTERM (143, pod `Failed`); anything else runs until deleted
(`e2e/kueue_suites/kwok_stages.py` plays each on kwok's nodes). Chosen over building agnhost
into an image for the real node because the suites need two worker nodes labelled
`on-demand` and `spot` with a kind node's capacity (several CPUs: specs request up to 4 CPUs
per pod), while the harness has one real node with the machine's 2 shared cores, which
kuota itself runs on; kwok's nodes carry any name, label and capacity. The cost: no
container runs. `kubectl exec` into a pod reaches kwok's kubelet API, which runs the
command on the machine inside the cluster's network namespace with stand-ins for `curl`
and `cat` first on `PATH` (`e2e/kueue_suites/pod_exec.py`): a Service's cluster DNS name
goes to one of its ready endpoints (so the metrics specs read kuota's real metrics,
authenticated by a token minted for the curl pod's ServiceAccount), and agnhost's `/exit`
ends the pod with the asked exit code through a kwok stage. Anything else such a command
asks is refused with a message naming it; a spec that needs a process inside the
container (Ray's dashboard, a training script) cannot pass here.

Exclusions (`exclusions.yaml`, specs that inspect Kueue's binary rather than the cluster):
none; every selected spec ran against kuota and is counted.

**multikueue/baseline** needs three clusters (kubeconfig contexts `kind-kind-manager`,
`kind-kind-worker1`, `kind-kind-worker2`), each with the Kueue-compatible install on a real
node, and the manager's pods reaching each worker's API server as
`https://kind-worker1-control-plane:6443` (the address Kueue's util.KubeconfigForMultiKueueSA
writes into the workers' kubeconfig Secrets): three real nodes whose network namespaces are
linked, API servers on 6443 with that name in their certificates, and the name resolvable in
the manager's pods. This harness starts one cluster per suite, so the suite's
SynchronizedBeforeSuite fails at once (no such context) and its specs are counted as not run.
"""


def environment_text(suites: tuple[str, ...], filters_by_suite: dict[str, Filters]) -> str:
    lines = [ENVIRONMENT]
    for suite in suites:
        defaults = DEFAULTS[suite]
        used = filters_by_suite[suite]
        if used.label_filter and used.label_filter == defaults.label_filter:
            lines.append(f"- {suite}: label filter `{used.label_filter}`: {defaults.reason}.")
        elif used.label_filter:
            lines.append(f"- {suite}: label filter `{used.label_filter}` (given).")
        if used.focus:
            lines.append(f"- {suite}: focus `{used.focus}`.")
    return "\n".join(lines) + "\n"


def cmd_build(args: argparse.Namespace) -> int:
    started = time.monotonic()
    tools = KueueE2ETools.resolve(parse_suites(args.suites) if args.suites else SUITES)
    print(f"{tools.root} ({time.monotonic() - started:.0f}s)")
    return 0


def _filters(suite: str, args: argparse.Namespace) -> Filters:
    label_filter = (
        args.label_filter if args.label_filter is not None else DEFAULTS[suite].label_filter
    )
    return Filters(
        focus=args.focus or "",
        label_filter=label_filter,
        skip=report.skip_regex(load_exclusions(), suite),
    )


def _inventory(
    tools: KueueE2ETools, suite: str, filters: Filters
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str]]:
    out = OUT / suite.replace("/", "-")
    inventory = dry_run(tools, suite, Filters(), out / "inventory.xml")
    selected = dry_run(tools, suite, filters, out / "selected.xml")
    exclusions = load_exclusions()
    excluded = {
        name: next(e.reason for e in exclusions if e.matches(suite, name))
        for name in inventory
        if any(e.matches(suite, name) for e in exclusions)
    }
    return inventory, selected, excluded


def cmd_list(args: argparse.Namespace) -> int:
    suites = parse_suites(args.suites)
    tools = KueueE2ETools.resolve(suites)
    for suite in suites:
        inventory, selected, excluded = _inventory(tools, suite, _filters(suite, args))
        chosen = set(selected)
        print(f"== {suite}: {len(inventory)} specs, {len(selected)} selected")
        for name in inventory:
            mark = "x" if name in excluded else ("+" if name in chosen else " ")
            print(f" {mark} {name}")
    return 0


def results_file(suite: str) -> Path:
    """Where a full run records ``suite`` (pure): ``results/singlecluster-baseline.md``."""
    return RESULTS_DIR / f"{suite.replace('/', '-')}.md"


def _write(
    written: dict[Path, list[report.SuiteRun]],
    filters_by_suite: dict[str, Filters],
    *,
    date: str,
    commit: str,
    command: str,
) -> None:
    for path, recorded in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            report.document(
                recorded,
                load_causes(),
                date=date,
                commit=commit,
                command=command,
                environment=environment_text(
                    tuple(run.suite for run in recorded), filters_by_suite
                ),
            )
        )
        print(f"\nevery spec's outcome: {path}")


def cmd_report(args: argparse.Namespace) -> int:
    """Write a suite's results file again from its last run's JUnit report in ``build/``.

    For when ``causes.yaml`` names a failure better than it did at the run; the
    date is the run's (from the report), the commit and command are given.
    """
    if args.focus:
        print("report writes a full run's record again: --focus belongs to run", file=sys.stderr)
        return 2
    suites = parse_suites(args.suites)
    tools = KueueE2ETools.resolve(suites)
    filters_by_suite = {suite: _filters(suite, args) for suite in suites}
    for suite in suites:
        junit = OUT / suite.replace("/", "-") / "junit.xml"
        parsed = parse(junit.read_text())
        started, seconds = junit_time(junit.read_text())
        inventory, selected, excluded = _inventory(tools, suite, filters_by_suite[suite])
        run = report.SuiteRun(
            suite=suite,
            inventory=inventory,
            selected=selected,
            excluded=excluded,
            report=parsed,
            error="",
            seconds=seconds,
        )
        _write(
            {results_file(suite): [run]},
            filters_by_suite,
            date=f"{started} (written again from that run's JUnit report)",
            commit=args.commit,
            command=args.command_line,
        )
    return 0


def junit_time(xml_text: str) -> tuple[str, float]:
    """(when the run started, ``YYYY-MM-DD HH:MM UTC``; its seconds) of a Ginkgo report (pure)."""
    from xml.etree import ElementTree

    root = ElementTree.fromstring(xml_text)
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, "no testsuite in the report"
    stamp = datetime.fromisoformat(suite.get("timestamp", ""))
    return stamp.strftime("%Y-%m-%d %H:%M UTC"), float(suite.get("time", "0"))


def cmd_run(args: argparse.Namespace) -> int:
    suites = parse_suites(args.suites)
    started = time.monotonic()
    tools = KueueE2ETools.resolve(suites)
    print(f"[kueue-e2e] suites built: {tools.root} ({time.monotonic() - started:.0f}s)")
    filters_by_suite = {suite: _filters(suite, args) for suite in suites}
    runs: list[report.SuiteRun] = []
    for suite in suites:
        filters = filters_by_suite[suite]
        inventory, selected, excluded = _inventory(tools, suite, filters)
        print(
            f"[kueue-e2e] {suite}: {len(inventory)} specs, {len(selected)} selected, "
            f"{len(excluded)} excluded",
            flush=True,
        )
        out = OUT / suite.replace("/", "-")
        try:
            images = (kuota_image(OUT / "images"),)
            parsed, error, seconds = run_suite(
                tools, suite, filters, images=images, out=out, keep=args.keep
            )
        except Exception as failure:  # the environment itself: report it, go on
            parsed, error, seconds = None, f"environment: {type(failure).__name__}: {failure}", 0.0
            print(f"[kueue-e2e] {suite}: {error}", file=sys.stderr, flush=True)
        runs.append(
            report.SuiteRun(
                suite=suite,
                inventory=inventory,
                selected=selected,
                excluded=excluded,
                report=parsed,
                error=" ".join(error.split()),
                seconds=seconds,
            )
        )
        print(report.table([report.row(run) for run in runs]), flush=True)
    rows = [report.row(run) for run in runs]
    print()
    print(report.table(rows))
    for run in runs:
        if run.error:
            print(f"{run.suite}: {run.error}")
    command = args.command_line or " ".join(
        shlex.quote(a) for a in ["python", "-m", "e2e.kueue_suites", *sys.argv[1:]]
    )
    if args.results or args.focus:
        target = Path(args.results) if args.results else OUT / "RESULTS.md"
        written = {target: runs}
    else:
        written = {results_file(run.suite): [run] for run in runs}
    _write(
        written,
        filters_by_suite,
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        commit=_commit(),
        command=command,
    )
    if any(run.report is None for run in runs):
        return 1
    if args.strict and any(row.failed or row.not_run for row in rows):
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m e2e.kueue_suites", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build kueuectl and the suites' binaries")
    build.add_argument("--suites", default="", help="comma-separated; default: every suite")
    build.set_defaults(run=cmd_build)
    for name, handler, text in (
        ("list", cmd_list, "list each suite's specs (x: excluded, +: selected)"),
        ("run", cmd_run, "run the suites against kuota and record every outcome"),
        ("report", cmd_report, "write a suite's results file again from its last run"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--suites", default="", help="comma-separated; default: the baselines")
        sub.add_argument("--focus", default="", help="a regular expression for --ginkgo.focus")
        sub.add_argument(
            "--label-filter",
            default=None,
            help="--ginkgo.label-filter (default: the suite's, see suites.py)",
        )
        sub.set_defaults(run=handler)
        if name == "run":
            sub.add_argument("--results", default="", help="where to write the outcomes")
            sub.add_argument("--keep", action="store_true", help="keep each cluster's directory")
            sub.add_argument("--strict", action="store_true", help="fail on any failed spec")
            sub.add_argument("--command-line", default="", help="the command to record")
        if name == "report":
            sub.add_argument("--commit", required=True, help="the commit the run tested")
            sub.add_argument("--command-line", required=True, help="the run's command")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
