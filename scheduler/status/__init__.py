"""What the scheduler writes into ``status``, built as data (pure).

See docs/architecture.md#layers-and-imports.

The engine (``scheduler.core``) decides; this package turns its decisions and
its queue state into the exact ``status`` fields of the Kueue API: the
Workload's admission record and conditions (:mod:`.workload_status`), the
ClusterQueue and LocalQueue counts and conditions (:mod:`.queue_status`),
with the Kubernetes condition rules they share (:mod:`.conditions`).

Why a layer of its own, between ``core`` and ``kube``: it reads the engine's
output types (``Admit``, ``Evict``, ``Pending``, ``ClusterQueueStatus``), so
it cannot sit in ``scheduler.jobs`` or ``scheduler.api`` below the engine;
it is wire format, not scheduling, so it does not belong in the engine; and
it does no I/O, so it does not belong with the adapters in ``scheduler.kube``
(which only carries these values to the API server).  Being pure, every
message and every ``lastTransitionTime`` rule is a unit test.
"""
