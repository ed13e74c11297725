"""MultiKueue: a manager cluster admits by quota, worker clusters run the Jobs.

kuota's second controller, a process of its own (``python -m
scheduler.multikueue``, ``kuota-multikueue``), run on the manager cluster
only.  Two halves, kept apart as everywhere in kuota:

- :mod:`scheduler.multikueue.decisions` is pure: from the objects as read
  (MultiKueueCluster, its Secret, MultiKueueConfig, AdmissionCheck, the
  manager's Workload and Job, the remote Workload and Job of every worker) it
  says what each status should be and what to write where;
- :mod:`scheduler.multikueue.controller` moves bytes: it reads the manager,
  keeps one client per worker, and carries the decisions out.

The controller is level-based: every pass reads the whole picture again and
decides from it, so a crash or a lost write is repaired by the next pass.
"""
