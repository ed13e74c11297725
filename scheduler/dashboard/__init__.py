"""``kuota-dashboard``: queues, quota and waiting Workloads in the browser (docs/dashboard.md).

Read-only, behind the cluster's own authentication and authorization.  The
process (:mod:`.app`) mirrors the cluster (:mod:`.mirror`), reads it with
the scheduling engine as ``kuota explain`` does (:mod:`.analysis`), shapes
each page's data (:mod:`.views`, pure), keeps usage over time
(:mod:`.history`) and serves the page, the views and live updates
(:mod:`.server`, :mod:`.access`).  The page itself is plain HTML, script
and style in ``static/``.
"""
