"""The endpoint table and the one request handler behind every endpoint.

Every admission endpoint follows the same shape, so there is one handler:
read the body (bounded), decode JSON, parse the review, let the endpoint's
*decision* answer, render, count.  The decisions live in their own modules
(:mod:`~webhook.defaulting`, :mod:`~webhook.validate_kueue`,
:mod:`~webhook.convert`, and those of the job kinds below); this module
only wires them to paths (docs/api-differences.md#webhook-paths), the job kinds' paths from
the integration registry
(:func:`integration_endpoints`: each kind's paths follow from the
capabilities it declares, :func:`scheduler.jobs.webhook_path` names them:
the suspend decisions :mod:`~webhook.mutate_jobs` and
:mod:`~webhook.validate_jobs`, the gate :mod:`~webhook.mutate_gated`, the
pod-template marks :mod:`~webhook.mutate_templates`), and keeps the
two failure kinds apart: a malformed request is HTTP 400 with its reason,
an object kuota refuses is HTTP 200 with ``allowed: false``.  An
unexpected exception in a decision is logged and answered as a denial with
``InternalError`` — the server never answers 500 and keeps serving.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from scheduler.jobs import (
    AdmissionRules,
    GateOnCreate,
    Integration,
    QueuedThroughPods,
    SuspendOnCreate,
    capability,
    integrations,
    webhook_path,
)
from webhook.convert import convert_review
from webhook.defaulting import default_kueue_request
from webhook.logs import logger
from webhook.lookup import ClusterLookup
from webhook.metrics import WebhookMetrics
from webhook.mutate_gated import mutate_gated_request
from webhook.mutate_jobs import mutate_request
from webhook.mutate_templates import mutate_template_request
from webhook.review import (
    AdmissionRequest,
    BadRequest,
    ResponseBody,
    decode_json,
    deny_internal,
    parse_admission_review,
    review_body,
)
from webhook.settings import WebhookSettings
from webhook.validate_jobs import validate_request
from webhook.validate_kueue import validate_kueue_request

KUEUE_PREFIX: Final = "kueue-x-k8s-io-v1beta2"


@dataclass(frozen=True)
class KuotaKind:
    kind: str
    plural: str
    mutating: bool
    status_subresource: bool = False

    @property
    def validate_path(self) -> str:
        return f"/validate-{KUEUE_PREFIX}-{self.kind.lower()}"

    @property
    def mutate_path(self) -> str:
        return f"/mutate-{KUEUE_PREFIX}-{self.kind.lower()}"


KUOTA_KINDS: Final = (
    KuotaKind("ClusterQueue", "clusterqueues", mutating=True),
    KuotaKind("ResourceFlavor", "resourceflavors", mutating=True),
    KuotaKind("Workload", "workloads", mutating=True, status_subresource=True),
    KuotaKind("Cohort", "cohorts", mutating=False),
    KuotaKind("LocalQueue", "localqueues", mutating=False),
    KuotaKind("WorkloadPriorityClass", "workloadpriorityclasses", mutating=False),
    KuotaKind("AdmissionCheck", "admissionchecks", mutating=False),
    KuotaKind("MultiKueueConfig", "multikueueconfigs", mutating=False),
    KuotaKind("MultiKueueCluster", "multikueueclusters", mutating=False),
    KuotaKind("Topology", "topologies", mutating=False),
)
CONVERT: Final = "/convert"


@dataclass(frozen=True)
class DecisionContext:
    settings: WebhookSettings
    lookup: ClusterLookup


Decision = Callable[[AdmissionRequest, DecisionContext], Awaitable[tuple[ResponseBody, str]]]


def _kueue_validation(kind: KuotaKind) -> Decision:
    kinds = frozenset({kind.kind})

    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return validate_kueue_request(request, kinds=kinds, gates=context.settings.feature_gates)

    return decide


def _kueue_defaulting(kind: KuotaKind) -> Decision:
    kinds = frozenset({kind.kind})

    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return default_kueue_request(request, kinds=kinds, settings=context.settings)

    return decide


def _mutate_job(integration: Integration, suspendable: SuspendOnCreate) -> Decision:
    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return await mutate_request(
            integration, suspendable, request, settings=context.settings, lookup=context.lookup
        )

    return decide


def _validate_job(integration: Integration, rules: AdmissionRules) -> Decision:
    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return await validate_request(
            integration, rules, request, settings=context.settings, lookup=context.lookup
        )

    return decide


def _gate(integration: Integration, gated: GateOnCreate) -> Decision:
    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return await mutate_gated_request(
            integration, gated, request, settings=context.settings, lookup=context.lookup
        )

    return decide


def _mark_template(integration: Integration, kind: QueuedThroughPods) -> Decision:
    async def decide(
        request: AdmissionRequest, context: DecisionContext
    ) -> tuple[ResponseBody, str]:
        return await mutate_template_request(
            integration, kind, request, settings=context.settings, lookup=context.lookup
        )

    return decide


def integration_endpoints(integration: Integration) -> dict[str, Decision]:
    """Path → decision for one kind, from the capabilities it declares.

    A kind created suspended has the generic mutating decision (default
    queue, suspend); one with admission rules a validating path; a kind that
    cannot be suspended is gated at creation instead; a kind queued through
    its pods has its pod template marked.
    """
    endpoints: dict[str, Decision] = {}
    mutate, validate = webhook_path(integration, "mutate"), webhook_path(integration, "validate")
    if (suspendable := capability(integration, SuspendOnCreate)) is not None:
        endpoints[mutate] = _mutate_job(integration, suspendable)
    elif (gated := capability(integration, GateOnCreate)) is not None:
        endpoints[mutate] = _gate(integration, gated)
    elif (through_pods := capability(integration, QueuedThroughPods)) is not None:
        endpoints[mutate] = _mark_template(integration, through_pods)
    if (rules := capability(integration, AdmissionRules)) is not None:
        endpoints[validate] = _validate_job(integration, rules)
    return endpoints


def admission_endpoints() -> dict[str, Decision]:
    """Path → decision for every AdmissionReview endpoint.

    See docs/api-differences.md#webhook-paths.
    """
    endpoints: dict[str, Decision] = {}
    for integration in integrations():
        endpoints.update(integration_endpoints(integration))
    for kind in KUOTA_KINDS:
        endpoints[kind.validate_path] = _kueue_validation(kind)
        if kind.mutating:
            endpoints[kind.mutate_path] = _kueue_defaulting(kind)
    return endpoints


async def read_body(request: web.Request, limit: int) -> bytes:
    """The request body, refusing (400) anything over ``limit`` bytes without reading it all."""
    if request.content_length is not None and request.content_length > limit:
        raise BadRequest(
            f"request body of {request.content_length} bytes is larger than the limit "
            f"of {limit} bytes"
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await request.content.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise BadRequest(f"request body is larger than the limit of {limit} bytes")
        chunks.append(chunk)


def _bad_request(reason: str) -> web.Response:
    return web.json_response(
        {
            "kind": "Status",
            "status": "Failure",
            "code": 400,
            "reason": "BadRequest",
            "message": reason,
        },
        status=400,
    )


def admission_handler(
    path: str, decide: Decision, *, context: DecisionContext, metrics: WebhookMetrics
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        parsed: AdmissionRequest | None = None
        try:
            document = decode_json(await read_body(request, context.settings.max_body_bytes))
            parsed = parse_admission_review(document)
            answer, outcome = await decide(parsed, context)
            reply = web.json_response(review_body(answer))
        except BadRequest as bad:
            outcome, reply = "bad_request", _bad_request(str(bad))
            logger().info("bad request", extra={"context": {"endpoint": path, "reason": str(bad)}})
        except Exception as unexpected:  # noqa: BLE001 - the server must keep answering
            logger().exception("decision failed", extra={"context": {"endpoint": path}})
            outcome = "error"
            if parsed is None:
                reply = _bad_request(f"request could not be read: {type(unexpected).__name__}")
            else:
                reply = web.json_response(
                    review_body(deny_internal(parsed.uid, f"kuota webhook error: {unexpected}"))
                )
        metrics.observe(path, outcome, time.perf_counter() - started)
        if parsed is not None and outcome in ("denied", "patched", "error"):
            logger().info(
                "decision",
                extra={
                    "context": {
                        "endpoint": path,
                        "uid": parsed.uid,
                        "operation": parsed.operation,
                        "kind": parsed.kind[2],
                        "namespace": parsed.namespace,
                        "name": parsed.name,
                        "user": parsed.user.username,
                        "dryRun": parsed.dry_run,
                        "outcome": outcome,
                    }
                },
            )
        return reply

    return handle


def conversion_handler(
    *, context: DecisionContext, metrics: WebhookMetrics
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        try:
            answer, outcome = convert_review(
                decode_json(await read_body(request, context.settings.max_body_bytes))
            )
            reply: web.StreamResponse = web.json_response(answer)
        except BadRequest as bad:
            outcome, reply = "bad_request", _bad_request(str(bad))
        except Exception as unexpected:  # noqa: BLE001
            logger().exception("conversion failed", extra={"context": {"endpoint": CONVERT}})
            outcome, reply = (
                "error",
                _bad_request(
                    f"conversion could not be done: {type(unexpected).__name__}: {unexpected}"
                ),
            )
        metrics.observe(CONVERT, outcome, time.perf_counter() - started)
        if outcome != "converted":
            logger().info(
                "conversion", extra={"context": {"endpoint": CONVERT, "outcome": outcome}}
            )
        return reply

    return handle


def probe_handlers(is_ready: Callable[[], bool]) -> list[web.RouteDef]:
    async def healthz(_: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.StreamResponse:
        if is_ready():
            return web.Response(text="ok")
        return web.Response(text="not ready: no serving certificate loaded yet", status=503)

    return [web.get("/healthz", healthz), web.get("/readyz", readyz)]
