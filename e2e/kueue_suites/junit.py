"""Reading the JUnit reports Ginkgo writes (``--ginkgo.junit-report``): pure.

Ginkgo (v2.32, ``reporters/junit_report.go``) writes one ``<testcase>`` per
spec it reports, named ``[<leaf node type>] <full text> [<labels>]``, with the
spec's state in ``status``: ``passed``, ``skipped``, ``pending``, ``failed``,
``timedout``, ``panicked``, ``interrupted`` or ``aborted``.  The suite's own
nodes (``[BeforeSuite]``, ``[SynchronizedBeforeSuite]``, ``[AfterSuite]``,
``[ReportAfterSuite] ...``, ``[DeferCleanup (Suite)]``) are test cases too;
they are kept apart from the specs here.

A spec a filter left out (``--ginkgo.focus``, ``--ginkgo.skip``) is reported
``skipped`` with the bare message ``skipped``; one that called ``Skip()``
carries ``skipped - <reason>``.  When the suite's BeforeSuite fails, the specs
are not run and not reported at all: the inventory of a suite comes from a
dry run (``--ginkgo.dry-run``), which reports every spec, selected or not,
without running anything.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

SPEC_NODE = "It"
FAILURE_STATES = frozenset({"failed", "timedout", "panicked", "interrupted", "aborted"})
_NAME = re.compile(r"^\[(?P<node>[^\]]+)\]\s*(?P<text>.*)$", re.DOTALL)


@dataclass(frozen=True)
class Outcome:
    """One reported test case: a spec or a suite node."""

    name: str
    """The spec's text without the leaf-node prefix (labels kept, as Ginkgo prints them)."""
    node: str
    """The leaf node type: ``It`` for a spec, ``BeforeSuite`` etc. for the suite's nodes."""
    status: str
    message: str = ""
    """The failure (or skip) message, as Ginkgo reports it."""
    location: str = ""
    """Where the failure happened (``file.go:line``), from the failure's description."""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        return self.status in FAILURE_STATES

    @property
    def filtered_out(self) -> bool:
        """Left out by a focus/skip filter (never run), as opposed to a ``Skip()`` call."""
        return self.status == "skipped" and self.message in ("", "skipped")

    @property
    def skipped_at_run_time(self) -> bool:
        return (self.status == "skipped" and not self.filtered_out) or self.status == "pending"


@dataclass(frozen=True)
class SuiteReport:
    """The outcomes of one run of one suite binary."""

    description: str
    specs: tuple[Outcome, ...]
    suite_nodes: tuple[Outcome, ...] = ()
    special_failures: tuple[str, ...] = field(default=())
    """Ginkgo's ``SpecialSuiteFailureReason`` property (e.g. a suite timeout)."""

    def suite_node_failures(self) -> tuple[Outcome, ...]:
        return tuple(node for node in self.suite_nodes if node.failed)

    @property
    def before_suite_failed(self) -> bool:
        return any("BeforeSuite" in node.node for node in self.suite_node_failures())


def _split_name(full: str) -> tuple[str, str]:
    match = _NAME.match(full.strip())
    if match is None:
        return "", full.strip()
    return match.group("node"), match.group("text").strip()


_LOCATION = re.compile(r"(/[^\s:]+\.go:\d+)")


def _location(description: str) -> str:
    """The first ``path.go:line`` of a failure description, shortened after ``test/`` (pure)."""
    match = _LOCATION.search(description or "")
    if match is None:
        return ""
    path = match.group(1)
    for marker in ("/test/e2e/", "/test/util/", "/pkg/"):
        if marker in path:
            return marker.lstrip("/") + path.split(marker, 1)[1]
    return path.rsplit("/", 1)[-1]


def parse(xml_text: str) -> SuiteReport:
    """A Ginkgo JUnit report (the whole file) as outcomes (pure)."""
    root = ElementTree.fromstring(xml_text)
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    description = ""
    specs: list[Outcome] = []
    nodes: list[Outcome] = []
    special: list[str] = []
    for suite in suites:
        description = description or suite.get("name", "")
        for prop in suite.iter("property"):
            if prop.get("name") == "SpecialSuiteFailureReason" and prop.get("value"):
                special.extend(reason for reason in prop.get("value", "").split(",") if reason)
        for case in suite.findall("testcase"):
            node, text = _split_name(case.get("name", ""))
            message = ""
            location = ""
            for tag in ("failure", "error", "skipped"):
                element = case.find(tag)
                if element is not None:
                    message = element.get("message", "") or (element.text or "").strip()
                    location = _location(element.text or "")
                    break
            outcome = Outcome(
                name=text,
                node=node,
                status=case.get("status", ""),
                message=message,
                location=location,
                seconds=float(case.get("time", "0") or 0),
            )
            (specs if node == SPEC_NODE else nodes).append(outcome)
    return SuiteReport(
        description=description,
        specs=tuple(specs),
        suite_nodes=tuple(nodes),
        special_failures=tuple(special),
    )


def first_line(message: str, limit: int = 200) -> str:
    """The first non-empty line of a message, cut to ``limit`` characters (pure)."""
    for line in message.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def gist(message: str, limit: int = 300) -> str:
    """The first line of a Gomega failure and what it is about (pure).

    Gomega writes ``Timed out after 90s.`` / ``Unexpected error:``, then the value:
    an error's type line (``<*errors.StatusError | 0x...>:``) followed by its text,
    or ``Expected`` / ``<type>: value`` / ``to equal ...``.  Those few lines say why.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    parts = [lines[0]]
    for index, line in enumerate(lines[1:], 1):
        if line.startswith("<*") and index + 1 < len(lines):
            parts.append(lines[index + 1])
            break
        if line == "Expected":
            parts += [candidate for candidate in lines[index : index + 4] if candidate != "{"]
            break
    text = " ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"
