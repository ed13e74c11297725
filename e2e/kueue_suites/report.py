"""Counting, grouping and writing the outcomes of Kueue's suites run against kuota: pure.

For each suite run the harness has two JUnit reports: a dry run without
filters (every spec of the suite: the inventory), a dry run with the run's
filters (the specs selected), and the real run.  A spec is then exactly one of:

- **passed**, **failed** (failed, timed out, panicked, interrupted, aborted) or
  **skipped** (the spec itself called ``Skip()``, or is pending): it ran;
- **excluded**: named in ``exclusions.yaml`` with a one-line reason (specs that
  inspect Kueue's binary rather than the cluster), never run;
- **not selected**: left out by the run's ``FOCUS`` (or label filter);
- **not run**: selected but without an outcome (the suite's BeforeSuite failed,
  the suite timed out, or the binary crashed): counted, never hidden.

Failures are grouped by cause: ``causes.yaml`` names known causes (a spec name,
failure message or failure location pattern each); the rest are grouped by
where and how they failed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .junit import Outcome, SuiteReport, gist


@dataclass(frozen=True)
class Exclusion:
    suite: str
    spec: str
    """A regular expression matched against the spec's full text (``re.search``)."""
    reason: str

    def matches(self, suite: str, name: str) -> bool:
        return self.suite in (suite, "*") and re.search(self.spec, name) is not None


@dataclass(frozen=True)
class Cause:
    cause: str
    suites: tuple[str, ...] = ("*",)
    specs: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    locations: tuple[str, ...] = ()

    def matches(self, suite: str, outcome: Outcome) -> bool:
        if "*" not in self.suites and suite not in self.suites:
            return False
        return (
            any(re.search(p, outcome.name) for p in self.specs)
            or any(re.search(p, outcome.message, re.DOTALL) for p in self.messages)
            or any(re.search(p, outcome.location) for p in self.locations)
        )


def load_exclusions(document: Any) -> tuple[Exclusion, ...]:
    """``exclusions.yaml``: ``[{suite, spec, reason}]`` (pure)."""
    return tuple(
        Exclusion(suite=str(e["suite"]), spec=str(e["spec"]), reason=str(e["reason"]))
        for e in document or []
    )


def load_causes(document: Any) -> tuple[Cause, ...]:
    """``causes.yaml``: ``[{cause, suites?, specs?, messages?, locations?}]`` (pure)."""
    return tuple(
        Cause(
            cause=str(c["cause"]),
            suites=tuple(c.get("suites") or ("*",)),
            specs=tuple(c.get("specs") or ()),
            messages=tuple(c.get("messages") or ()),
            locations=tuple(c.get("locations") or ()),
        )
        for c in document or []
    )


def skip_regex(exclusions: Iterable[Exclusion], suite: str) -> str:
    """The ``--ginkgo.skip`` pattern that leaves the suite's exclusions out ('' if none)."""
    patterns = [f"(?:{e.spec})" for e in exclusions if e.suite in (suite, "*")]
    return "|".join(patterns)


def numbered(names: Iterable[str]) -> list[str]:
    """Names made unique in order of appearance: a repeat becomes ``name (#2)`` (pure)."""
    seen: Counter[str] = Counter()
    unique = []
    for name in names:
        seen[name] += 1
        unique.append(name if seen[name] == 1 else f"{name} (#{seen[name]})")
    return unique


@dataclass(frozen=True)
class SuiteRun:
    suite: str
    inventory: tuple[str, ...]
    """Every spec of the suite, as the unfiltered dry run lists it."""
    selected: tuple[str, ...]
    """The specs the run's filters select (exclusions already left out)."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Excluded spec -> reason."""
    report: SuiteReport | None = None
    error: str = ""
    """Why the run gave no (or an incomplete) report: crash, timeout, BeforeSuite."""
    seconds: float = 0.0

    def outcomes(self) -> dict[str, Outcome]:
        """The real run's outcome of each spec it ran (filtered-out ones dropped)."""
        if self.report is None:
            return {}
        names = numbered(o.name for o in self.report.specs)
        return {
            name: outcome
            for name, outcome in zip(names, self.report.specs, strict=True)
            if not outcome.filtered_out
        }


@dataclass(frozen=True)
class Row:
    suite: str
    specs: int
    passed: int
    failed: int
    skipped: int
    excluded: int
    not_selected: int
    not_run: int
    seconds: float = 0.0

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.skipped


def spec_states(run: SuiteRun) -> dict[str, str]:
    """Every spec of the inventory -> passed | failed | skipped | excluded | not selected |
    not run (pure)."""
    outcomes = run.outcomes()
    selected = set(run.selected)
    states = {}
    for name in run.inventory:
        outcome = outcomes.get(name)
        if name in run.excluded:
            states[name] = "excluded"
        elif outcome is not None and outcome.passed:
            states[name] = "passed"
        elif outcome is not None and outcome.failed:
            states[name] = "failed"
        elif outcome is not None and outcome.skipped_at_run_time:
            states[name] = "skipped"
        elif name not in selected:
            states[name] = "not selected"
        else:
            states[name] = "not run"
    return states


def row(run: SuiteRun) -> Row:
    counts = Counter(spec_states(run).values())
    return Row(
        suite=run.suite,
        specs=len(run.inventory),
        passed=counts["passed"],
        failed=counts["failed"],
        skipped=counts["skipped"],
        excluded=counts["excluded"],
        not_selected=counts["not selected"],
        not_run=counts["not run"],
        seconds=run.seconds,
    )


HEADERS = (
    "suite",
    "specs",
    "ran",
    "passed",
    "failed",
    "skipped",
    "excluded",
    "not selected",
    "not run",
    "minutes",
)


def table(rows: Sequence[Row]) -> str:
    """The one table printed at the end of a run, plain text (pure)."""
    cells = [HEADERS] + [
        (
            r.suite,
            str(r.specs),
            str(r.ran),
            str(r.passed),
            str(r.failed),
            str(r.skipped),
            str(r.excluded),
            str(r.not_selected),
            str(r.not_run),
            f"{r.seconds / 60:.1f}",
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADERS))]
    lines = []
    for index, line in enumerate(cells):
        lines.append(
            "  ".join(
                cell.ljust(width) if column == 0 else cell.rjust(width)
                for column, (cell, width) in enumerate(zip(line, widths, strict=True))
            )
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown_table(rows: Sequence[Row]) -> str:
    lines = [
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(HEADERS) - 1)) + "|",
    ]
    for r in rows:
        lines.append(
            f"| {r.suite} | {r.specs} | {r.ran} | {r.passed} | {r.failed} | {r.skipped} | "
            f"{r.excluded} | {r.not_selected} | {r.not_run} | {r.seconds / 60:.1f} |"
        )
    return "\n".join(lines)


def _unclassified(outcome: Outcome) -> str:
    where = outcome.location or "unknown location"
    return f"unclassified: {where}: {gist(outcome.message, 200)}"


def failure_groups(
    runs: Sequence[SuiteRun], causes: Sequence[Cause]
) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(cause, [(suite, spec), ...])], largest group first (pure)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for run in runs:
        outcomes = run.outcomes()
        for name, state in spec_states(run).items():
            if state != "failed":
                continue
            outcome = outcomes[name]
            cause = next(
                (c.cause for c in causes if c.matches(run.suite, outcome)), _unclassified(outcome)
            )
            groups.setdefault(cause, []).append((run.suite, name))
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def document(
    runs: Sequence[SuiteRun],
    causes: Sequence[Cause],
    *,
    date: str,
    commit: str,
    command: str,
    environment: str,
) -> str:
    """A results file: date, commit, command, the table, failures by cause, every spec (pure)."""
    rows = [row(run) for run in runs]
    out = [
        "# Kueue's end-to-end suites against kuota",
        "",
        "Written by `make test-kueue-e2e` (`e2e/kueue_suites`); do not edit by hand: the",
        "causes of failures are named in `e2e/kueue_suites/causes.yaml`, the exclusions in",
        "`e2e/kueue_suites/exclusions.yaml`.",
        "",
        f"- date: {date}",
        f"- commit: {commit}",
        f"- command: `{command}`",
        "",
        environment.strip(),
        "",
        "## Results",
        "",
        markdown_table(rows),
        "",
    ]
    for run in runs:
        if run.error:
            out.append(f"- **{run.suite}**: {_escape(run.error)}")
    if any(run.error for run in runs):
        out.append("")
    groups = failure_groups(runs, causes)
    out += ["## Failures by cause", ""]
    if not groups:
        out.append("No spec failed.")
    for cause, specs in groups:
        suites = sorted({suite for suite, _ in specs})
        out.append(f"- **{len(specs)}** ({', '.join(suites)}): {_escape(cause)}")
    out.append("")
    excluded = [(run.suite, name, reason) for run in runs for name, reason in run.excluded.items()]
    if excluded:
        out += ["## Excluded", ""]
        out += [
            f"- {suite}: {_escape(name)} — {_escape(reason)}" for suite, name, reason in excluded
        ]
        out.append("")
    out += ["## Every spec", ""]
    for run in runs:
        outcomes = run.outcomes()
        out += [f"### {run.suite}", "", "| outcome | spec | failure |", "|---|---|---|"]
        for name, state in spec_states(run).items():
            detail = ""
            outcome = outcomes.get(name)
            if state == "failed" and outcome is not None:
                detail = f"{outcome.location}: {gist(outcome.message, 240)}"
            elif state == "skipped" and outcome is not None:
                detail = gist(outcome.message, 160)
            elif state == "excluded":
                detail = run.excluded[name]
            out.append(f"| {state} | {_escape(name)} | {_escape(detail)} |")
        out.append("")
    return "\n".join(out)
