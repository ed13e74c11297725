"""The kinds kuota manages: one registry line per integration folder.

Adding a kind is adding its folder under ``scheduler/jobs/`` and one line
here; the webhook's paths and registrations, the scheduler's watches and
RBAC (the chart's generated templates) and the CLI follow from the registry
(docs/architecture.md, "Adding a kind").
"""

from scheduler.jobs.appwrapper import APPWRAPPER
from scheduler.jobs.batchjob import BATCH_JOB
from scheduler.jobs.deployment import DEPLOYMENT
from scheduler.jobs.jaxjob import JAXJOB
from scheduler.jobs.jobset import JOBSET
from scheduler.jobs.leaderworkerset import LEADER_WORKER_SET
from scheduler.jobs.mpijob import MPIJOB
from scheduler.jobs.pod import POD
from scheduler.jobs.pytorchjob import PYTORCHJOB
from scheduler.jobs.raycluster import RAYCLUSTER
from scheduler.jobs.rayjob import RAYJOB
from scheduler.jobs.rayservice import RAYSERVICE
from scheduler.jobs.registry import register
from scheduler.jobs.statefulset import STATEFULSET
from scheduler.jobs.trainjob import TRAINJOB

register(BATCH_JOB)
register(JOBSET)
register(POD)
register(DEPLOYMENT)
register(STATEFULSET)
register(LEADER_WORKER_SET)
register(RAYJOB)
register(RAYCLUSTER)
register(RAYSERVICE)
register(MPIJOB)
register(PYTORCHJOB)
register(JAXJOB)
register(APPWRAPPER)
register(TRAINJOB)
