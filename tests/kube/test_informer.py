"""The informer's state machine with a scripted source and virtual time:
list then watch, resume where it stopped, relist and diff on 410, back off on
broken connections (1x, 2x, 4x the initial delay), and never lose an event."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from scheduler.kube.informer import (
    AskAgain,
    Backoff,
    Event,
    Expired,
    Informer,
    TransientError,
    diff,
)


def obj(name: str, version: int, namespace: str | None = "ns") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "resourceVersion": str(version)}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata}


class ScriptedSource:
    """Each list() returns the next scripted list; each watch() plays the next script.

    A script is a list of raw events or exceptions; the stream ends after it.
    When the scripts run out, watch() blocks until the test cancels the informer.
    """

    def __init__(
        self, lists: list[tuple[list[dict[str, Any]], str]], watches: list[list[Any]]
    ) -> None:
        self.lists = lists
        self.watches = watches
        self.watched_from: list[str] = []
        self.exhausted = asyncio.Event()

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        return self.lists.pop(0)

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        self.watched_from.append(resource_version)
        if not self.watches:
            self.exhausted.set()
            await asyncio.Event().wait()
        for step in self.watches.pop(0):
            if isinstance(step, Exception):
                raise step
            yield step


async def run_until_exhausted(informer: Informer, source: ScriptedSource) -> None:
    task = asyncio.create_task(informer.run())
    await asyncio.wait_for(source.exhausted.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def recorder() -> tuple[list[tuple[str, str]], Any]:
    seen: list[tuple[str, str]] = []
    return seen, lambda event: seen.append((event.type, event.key))


async def test_lists_then_watches_from_the_listed_version() -> None:
    source = ScriptedSource(
        lists=[([obj("a", 5), obj("b", 6)], "10")],
        watches=[
            [
                {"type": "ADDED", "object": obj("c", 11)},
                {"type": "MODIFIED", "object": obj("a", 12)},
                {"type": "DELETED", "object": obj("b", 13)},
            ]
        ],
    )
    seen, handler = recorder()
    informer = Informer("test", source, handler)
    await run_until_exhausted(informer, source)
    assert seen == [
        ("ADDED", "ns/a"),
        ("ADDED", "ns/b"),
        ("ADDED", "ns/c"),
        ("MODIFIED", "ns/a"),
        ("DELETED", "ns/b"),
    ]
    assert source.watched_from == ["10", "13"], (
        "resumes from the last version seen when the stream ends"
    )
    assert set(informer.store) == {"ns/a", "ns/c"}
    assert informer.synced.is_set()


async def test_bookmarks_advance_the_version_without_events() -> None:
    source = ScriptedSource(
        lists=[([], "1")], watches=[[{"type": "BOOKMARK", "object": obj("", 42, None)}]]
    )
    seen, handler = recorder()
    await run_until_exhausted(Informer("test", source, handler), source)
    assert seen == []
    assert source.watched_from == ["1", "42"]


async def test_410_relists_and_delivers_what_vanished_in_between() -> None:
    source = ScriptedSource(
        lists=[([obj("a", 5), obj("b", 6)], "10"), ([obj("a", 20), obj("c", 21)], "22")],
        watches=[
            [{"type": "ERROR", "object": {"code": 410, "message": "too old resource version"}}],
            [],
        ],
    )
    seen, handler = recorder()
    informer = Informer("test", source, handler)
    await run_until_exhausted(informer, source)
    assert seen == [
        ("ADDED", "ns/a"),
        ("ADDED", "ns/b"),
        ("MODIFIED", "ns/a"),
        ("ADDED", "ns/c"),
        ("DELETED", "ns/b"),
    ]
    assert source.watched_from == ["10", "22", "22"]
    assert informer.lists == 2


async def test_expired_raised_by_the_source_also_relists() -> None:
    source = ScriptedSource(lists=[([], "1"), ([obj("x", 3)], "3")], watches=[[Expired("gone")]])
    seen, handler = recorder()
    await run_until_exhausted(Informer("test", source, handler), source)
    assert seen == [("ADDED", "ns/x")]


async def test_a_source_asking_to_be_listed_again_relists_without_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A source with nothing to watch yet asks every few seconds: no "expired" line each time.
    source = ScriptedSource(
        lists=[([], "1"), ([], "2"), ([obj("x", 3)], "3")],
        watches=[[AskAgain("not needed yet")], [Expired("gone")]],
    )
    seen, handler = recorder()
    with caplog.at_level(logging.INFO, logger="kuota.informer"):
        await run_until_exhausted(Informer("test", source, handler), source)
    assert seen == [("ADDED", "ns/x")]
    said = [r.getMessage() for r in caplog.records]
    assert said == ["watch expired, listing again"], "only the real expiry is logged"


async def test_broken_connections_back_off_exponentially_and_resume_from_the_last_version() -> None:
    slept: list[float] = []

    async def virtual_sleep(seconds: float) -> None:
        slept.append(seconds)

    source = ScriptedSource(
        lists=[([], "1")],
        watches=[
            [{"type": "ADDED", "object": obj("a", 2)}, TransientError("reset")],
            [TransientError("refused")],
            [TransientError("refused")],
            [],
        ],
    )
    seen, handler = recorder()
    informer = Informer(
        "test",
        source,
        handler,
        backoff=Backoff(initial=1, maximum=30, jitter=0),
        sleep=virtual_sleep,
    )
    await run_until_exhausted(informer, source)
    assert slept == [1, 2, 4]
    assert source.watched_from == ["1", "2", "2", "2", "2"], (
        "no relist, no lost event: resume from version 2"
    )
    assert seen == [("ADDED", "ns/a")]


async def test_a_successful_event_resets_the_backoff() -> None:
    slept: list[float] = []

    async def virtual_sleep(seconds: float) -> None:
        slept.append(seconds)

    source = ScriptedSource(
        lists=[([], "1")],
        watches=[
            [TransientError("a")],
            [{"type": "ADDED", "object": obj("a", 2)}, TransientError("b")],
            [],
        ],
    )
    informer = Informer(
        "test", source, lambda e: None, backoff=Backoff(initial=1, jitter=0), sleep=virtual_sleep
    )
    await run_until_exhausted(informer, source)
    assert slept == [1, 1]


def test_diff_reports_only_changes() -> None:
    held = {"ns/a": obj("a", 1), "ns/b": obj("b", 2)}
    listed = {"ns/a": obj("a", 1), "ns/c": obj("c", 3)}
    assert [(e.type, e.key) for e in diff(held, listed)] == [("ADDED", "ns/c"), ("DELETED", "ns/b")]
    assert isinstance(diff({}, {"k": obj("k", 1)})[0], Event)


def test_cluster_scoped_keys_have_no_namespace() -> None:
    assert [e.key for e in diff({}, {"rf": obj("rf", 1, None)})] == ["rf"]


def test_list_items_of_built_in_types_get_their_type_back() -> None:
    from scheduler.kube.source import _with_type

    page = {"apiVersion": "batch/v1", "kind": "JobList"}
    item = _with_type({"metadata": {"name": "j"}}, page)
    assert (item["apiVersion"], item["kind"]) == ("batch/v1", "Job")
    typed = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {}}
    assert _with_type(typed, {"kind": "WorkloadList"}) is typed
