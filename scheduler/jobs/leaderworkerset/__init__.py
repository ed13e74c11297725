"""The ``leaderworkerset.x-k8s.io/leaderworkerset`` integration: LeaderWorkerSets.

:mod:`.integration` is the class (the webhook's marks, the scheduler's part,
the rules); :mod:`.replicas` the Workload of each group and the pods placed
in it; :mod:`.validation` the admission rules of docs/validation.md#jobs.
"""

from scheduler.jobs.leaderworkerset.integration import LEADER_WORKER_SET, LeaderWorkerSet
from scheduler.jobs.leaderworkerset.validation import validate_leaderworkerset

__all__ = ["LEADER_WORKER_SET", "LeaderWorkerSet", "validate_leaderworkerset"]
