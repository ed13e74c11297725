"""Request counts and latency histograms, by endpoint and outcome.

One ``CollectorRegistry`` per application (never the global one), so two
apps in one test process do not share counters.  Outcomes are a closed set
of words: ``allowed``, ``patched``, ``denied``, ``converted``, ``failed``
(a conversion refused), ``bad_request`` (HTTP 400) and ``error`` (kuota could
not decide; answered as a denial).

The HTTPS listener adds the connections it holds (handshaking ones
included) and how many it closed at its bound (:mod:`webhook.connections`):
a steadily growing eviction count other than ``client_closed`` (connections
the client had already left) means the bound is too small for the API
servers, or someone is holding connections open.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# Admission answers are sub-millisecond; the API server gives up after timeoutSeconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


@dataclass
class WebhookMetrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    connections: Gauge
    evictions: Counter

    @classmethod
    def create(cls) -> WebhookMetrics:
        registry = CollectorRegistry(auto_describe=True)
        requests = Counter(
            "kuota_webhook_requests",
            "Webhook requests answered, by endpoint and outcome.",
            ("endpoint", "outcome"),
            registry=registry,
        )
        latency = Histogram(
            "kuota_webhook_request_duration_seconds",
            "Time to answer one webhook request, by endpoint and outcome.",
            ("endpoint", "outcome"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        connections = Gauge(
            "kuota_webhook_connections",
            "HTTPS connections open now, TLS handshakes included.",
            registry=registry,
        )
        evictions = Counter(
            "kuota_webhook_connections_evicted",
            "Connections closed to stay within --max-connections, by why they could go: "
            "client_closed, never_used, idle, stale_request.",
            ("why",),
            registry=registry,
        )
        return cls(
            registry=registry,
            requests=requests,
            latency=latency,
            connections=connections,
            evictions=evictions,
        )

    def observe(self, endpoint: str, outcome: str, seconds: float) -> None:
        self.requests.labels(endpoint, outcome).inc()
        self.latency.labels(endpoint, outcome).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
