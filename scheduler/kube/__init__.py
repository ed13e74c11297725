"""The Kubernetes adapters: the only package that imports kubernetes_asyncio.

See docs/architecture.md#layers-and-imports.

- :mod:`.client` makes every ``ApiClient``; :mod:`.rest` is raw JSON on any
  path with a small exception vocabulary (the webhook, the CLI and the
  certificate bootstrap use these two and nothing else of this package).
- :mod:`.informer`, :mod:`.source`, :mod:`.watches`: list and watch into
  :mod:`.mirror`, which feeds the engine and keeps the raw objects writes
  are computed from.
- :mod:`.executor`: engine decisions and Job actions become writes through
  :mod:`.writer`; :mod:`.queue_reporter` writes queue status.
- :mod:`.leader`: Lease election; :mod:`.metrics`: what the adapters record.
"""
