"""The kinds Kueue manages and kuota does not: each queued object is told so, once."""

from __future__ import annotations

from scheduler.api.config_fields import CHART_FRAMEWORKS, KNOWN_FRAMEWORKS
from scheduler.api.refs import QUEUE_NAME_LABEL
from scheduler.jobs.unmanaged_kinds import UNMANAGED_KINDS, ToldObjects, not_managed_message


def _trainjob(uid: str = "u1", queue: str | None = "team-a") -> dict:
    labels = {QUEUE_NAME_LABEL: queue} if queue is not None else {}
    return {
        "kind": "TFJob",
        "metadata": {"name": "t", "namespace": "ml", "uid": uid, "labels": labels},
    }


def test_every_framework_kueue_knows_is_managed_or_watched_as_unmanaged() -> None:
    unmanaged = {kind.framework for kind in UNMANAGED_KINDS}
    assert unmanaged == set(KNOWN_FRAMEWORKS) - set(CHART_FRAMEWORKS)
    for kind in UNMANAGED_KINDS:
        assert (
            kind.framework.startswith(kind.group + "/") and kind.resource == kind.kind.lower() + "s"
        )


def test_a_queued_object_is_told_once_and_again_after_it_was_deleted() -> None:
    told = ToldObjects()
    assert told.to_tell("ADDED", _trainjob())
    assert not told.to_tell("MODIFIED", _trainjob()), "a re-list or an update: not again"
    assert not told.to_tell("DELETED", _trainjob())
    assert told.to_tell("ADDED", _trainjob()), "a new object of the same name and UID"
    assert told.to_tell("ADDED", _trainjob(uid="u2"))
    assert not told.to_tell("ADDED", _trainjob(uid="u3", queue=None))
    assert not told.to_tell("ADDED", _trainjob(uid="u4", queue=""))


def test_the_message_names_the_framework_and_what_happens() -> None:
    trainjob = next(k for k in UNMANAGED_KINDS if k.kind == "TFJob")
    message = not_managed_message(trainjob)
    assert "kubeflow.org/tfjob" in message and "runs unqueued" in message
    assert "no quota" in message
