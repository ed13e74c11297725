"""AdmissionReview (``admission.k8s.io/v1``) in and out: parsing and answers.

Two kinds of failure are kept apart here (as kopf does): a body that is not
a usable AdmissionReview is a *malformed request* — :class:`BadRequest`, which
the routes turn into HTTP 400 with a one-line reason — while a well-formed
review of an object kuota does not allow is an ordinary HTTP 200 answer with
``allowed: false``.  Everything in this module is pure.

Only the fields kuota reads are taken from the request; the rest of the
review (``resource``, ``requestKind``, ``options`` …) is ignored, so a newer
API server adding fields never breaks the webhook.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypedDict

import jsonpatch

from scheduler.api.field import FieldError
from scheduler.api.validation.render import AdmissionStatus, admission_status

ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"
OPERATIONS: Final = ("CREATE", "UPDATE", "DELETE", "CONNECT")
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]


class BadRequest(ValueError):
    """The request body is not something the webhook can answer (HTTP 400)."""


@dataclass(frozen=True)
class UserInfo:
    username: str = ""
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of ``AdmissionReview.request`` kuota decides on."""

    uid: str
    operation: Operation
    kind: tuple[str, str, str]
    """(group, version, kind) of ``object`` as sent (after any matchPolicy conversion)."""
    namespace: str | None
    name: str | None
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    user: UserInfo = field(default_factory=UserInfo)
    dry_run: bool = False
    sub_resource: str = ""

    @property
    def api_version(self) -> str:
        group, version, _ = self.kind
        return f"{group}/{version}" if group else version


class ResponseBody(TypedDict, total=False):
    uid: str
    allowed: bool
    status: AdmissionStatus | dict[str, Any]
    patchType: str
    patch: str
    warnings: list[str]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _object_or_none(value: object, what: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRequest(f"request.{what} must be a JSON object, not {type(value).__name__}")
    return value


def decode_json(body: bytes) -> Any:
    """Pure: the JSON document of a request body, or :class:`BadRequest` saying why not."""
    if not body:
        raise BadRequest("empty request body; expected a JSON AdmissionReview")
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise BadRequest("request body is not UTF-8 text") from None
    except json.JSONDecodeError as broken:
        raise BadRequest(
            f"request body is not valid JSON: {broken.msg} "
            f"at line {broken.lineno} column {broken.colno}"
        ) from None
    except RecursionError:
        raise BadRequest("request body is nested too deeply") from None


def parse_admission_review(document: object) -> AdmissionRequest:
    """Pure: the request of an ``admission.k8s.io/v1`` AdmissionReview, else :class:`BadRequest`."""
    if not isinstance(document, dict):
        raise BadRequest("expected a JSON object of kind AdmissionReview")
    if document.get("kind") != "AdmissionReview":
        raise BadRequest(f"expected kind AdmissionReview, got {document.get('kind')!r}")
    if document.get("apiVersion") != ADMISSION_API_VERSION:
        raise BadRequest(
            f"expected apiVersion {ADMISSION_API_VERSION} (admissionReviewVersions: [v1]), "
            f"got {document.get('apiVersion')!r}"
        )
    request = document.get("request")
    if not isinstance(request, dict):
        raise BadRequest("AdmissionReview has no request object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest("request.uid is missing")
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise BadRequest(
            f"request.operation must be one of {', '.join(OPERATIONS)}, got {operation!r}"
        )
    kind = request.get("kind")
    if (
        not isinstance(kind, dict)
        or not isinstance(kind.get("kind"), str)
        or not isinstance(kind.get("version"), str)
    ):
        raise BadRequest("request.kind must be an object with group, version and kind")
    found_user = request.get("userInfo")
    user: dict[str, Any] = found_user if isinstance(found_user, dict) else {}
    found_groups = user.get("groups")
    groups: list[Any] = found_groups if isinstance(found_groups, list) else []
    return AdmissionRequest(
        uid=uid,
        operation=operation,
        kind=(_text(kind.get("group")), kind["version"], kind["kind"]),
        namespace=_text(request.get("namespace")) or None,
        name=_text(request.get("name")) or None,
        object=_object_or_none(request.get("object"), "object"),
        old_object=_object_or_none(request.get("oldObject"), "oldObject"),
        user=UserInfo(
            username=_text(user.get("username")),
            groups=tuple(g for g in groups if isinstance(g, str)),
        ),
        dry_run=request.get("dryRun") is True,
        sub_resource=_text(request.get("subResource")),
    )


def review_body(response: ResponseBody) -> dict[str, Any]:
    """Pure: the AdmissionReview document that wraps ``response``."""
    return {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "AdmissionReview",
        "response": dict(response),
    }


def allow(
    uid: str, *, patch: Sequence[Mapping[str, Any]] = (), warnings: Sequence[str] = ()
) -> ResponseBody:
    """Pure: an ``allowed: true`` answer, with a JSON patch when there is one."""
    response: ResponseBody = {"uid": uid, "allowed": True}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(
            json.dumps(list(patch), separators=(",", ":")).encode()
        ).decode()
    if warnings:
        response["warnings"] = list(warnings)
    return response


def deny(uid: str, errors: Sequence[FieldError]) -> ResponseBody:
    """Pure: ``allowed: false`` with the status ``kuota validate`` would print (422/403)."""
    return {"uid": uid, "allowed": False, "status": dict(admission_status(errors))}


def deny_internal(uid: str, message: str) -> ResponseBody:
    """Pure: a denial because kuota could not decide (e.g. an owner could not be read)."""
    return {
        "uid": uid,
        "allowed": False,
        "status": {"code": 500, "reason": "InternalError", "message": message},
    }


def json_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pure: the RFC 6902 operations that turn ``before`` into ``after`` (made by ``jsonpatch``)."""
    operations: list[dict[str, Any]] = jsonpatch.make_patch(before, after).patch
    return operations


def decode_patch(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pure: the JSON patch carried by an answer (tests and the benchmark read it back)."""
    encoded = response.get("patch")
    if not isinstance(encoded, str):
        return []
    decoded: list[dict[str, Any]] = json.loads(base64.b64decode(encoded))
    return decoded
