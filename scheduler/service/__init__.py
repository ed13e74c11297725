"""``kuota-scheduler``, the process: it composes, it decides nothing.

See docs/architecture.md#processes and docs/architecture.md#layers-and-imports.

:mod:`.app` (flags, client, leadership, signals, main), :mod:`.loop` (the
turn loop and its timing), :mod:`.observability` (health and metrics
endpoints).  No kubernetes_asyncio here (an import contract says so).
"""
