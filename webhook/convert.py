"""The CRD conversion endpoint: ``ConversionReview`` (``apiextensions.k8s.io/v1``).

The API server stores every kuota kind in ``v1beta2`` and calls ``/convert``
whenever a client reads or writes another version.  Each object goes through
the API layer's conversion (:func:`scheduler.api.convert.convert_owned`: through
the hub, taking over the request's parsed objects instead of copying them),
unchecked: validation is the admission webhooks' job and a stored object must
always be readable, so conversion here never re-applies
the legacy rules.  One object that cannot be converted fails the whole
review with its field path, as the API server expects.
"""

from __future__ import annotations

from typing import Any, Final

from scheduler.api import objects as raw_objects
from scheduler.api.convert import ConversionError, convert_owned
from webhook.review import BadRequest

CONVERSION_API_VERSION: Final = "apiextensions.k8s.io/v1"


def parse_conversion_review(document: object) -> tuple[str, str, list[Any]]:
    """Pure: (uid, desiredAPIVersion, objects) of a ConversionReview, else :class:`BadRequest`."""
    if not isinstance(document, dict) or document.get("kind") != "ConversionReview":
        raise BadRequest("expected a JSON object of kind ConversionReview")
    if document.get("apiVersion") != CONVERSION_API_VERSION:
        raise BadRequest(
            f"expected apiVersion {CONVERSION_API_VERSION} (conversionReviewVersions: [v1]), "
            f"got {document.get('apiVersion')!r}"
        )
    request = document.get("request")
    if not isinstance(request, dict):
        raise BadRequest("ConversionReview has no request object")
    uid, desired, objects = (
        request.get("uid"),
        request.get("desiredAPIVersion"),
        request.get("objects"),
    )
    if not isinstance(uid, str) or not uid:
        raise BadRequest("request.uid is missing")
    if not isinstance(desired, str) or not desired:
        raise BadRequest("request.desiredAPIVersion is missing")
    if not isinstance(objects, list):
        raise BadRequest("request.objects must be a list")
    return uid, desired, objects


def convert_review(document: object) -> tuple[dict[str, Any], str]:
    """Pure: the ConversionReview answer for ``document`` and an outcome word."""
    uid, desired, objects = parse_conversion_review(document)
    converted: list[dict[str, Any]] = []
    for position, item in enumerate(objects):
        try:
            if not isinstance(item, dict):
                raise ConversionError(f"objects[{position}]", "must be a JSON object")
            # The review is this request's own parsed JSON: its objects are given up
            # to the conversion, which then copies nothing it need not.
            converted.append(convert_owned(item, desired))
        except ConversionError as failed:
            name = raw_objects.metadata(item).get("name") if isinstance(item, dict) else None
            subject = (
                f"{item.get('kind')} {name!r}" if isinstance(item, dict) else f"objects[{position}]"
            )
            response = {
                "uid": uid,
                "result": {"status": "Failure", "message": f"{subject}: {failed}"},
            }
            return _wrap(response), "failed"
    return _wrap(
        {"uid": uid, "convertedObjects": converted, "result": {"status": "Success"}}
    ), "converted"


def _wrap(response: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview", "response": response}
