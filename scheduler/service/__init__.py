"""``kuota-scheduler``, the process (DESIGN.md layer 5): it composes, it decides nothing.

:mod:`.app` (flags, client, leadership, signals, main), :mod:`.loop` (the
turn loop and its timing), :mod:`.observability` (health and metrics
endpoints).  No kubernetes_asyncio here (an import contract says so).
"""
