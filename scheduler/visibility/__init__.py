"""The visibility API (``visibility.kueue.x-k8s.io``): pending workloads and their places.

See docs/visibility.md.  Pure parts: the wire format (:mod:`.wire`), the
pages read from the engine's queues (:mod:`.pages`), discovery and OpenAPI
(:mod:`.discovery`), the front proxy's identity (:mod:`.identity`).
Adapters: the RBAC reviewer (:mod:`.access`, through ``scheduler.kube.rest``),
TLS (:mod:`.tls`), the live scheduler as the source (:mod:`.source`) and the
HTTPS server (:mod:`.server`), which the scheduler process starts.
"""
