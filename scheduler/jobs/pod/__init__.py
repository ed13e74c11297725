"""Kueue's ``pod`` framework: plain Pods queued through a scheduling gate, alone or in groups.

:data:`POD` is the integration (:mod:`.integration`); :mod:`.pods` holds the
rules about one Pod, :mod:`.controller` the decision for a single Pod and
:mod:`.group` the pod groups.
"""

from scheduler.jobs.pod.integration import MANAGED_POD_SELECTOR, POD, POD_FRAMEWORK, Pod
from scheduler.jobs.pod.pods import MAIN_POD_SET, gate, is_gated, role_hash, ungate

__all__ = [
    "MAIN_POD_SET",
    "MANAGED_POD_SELECTOR",
    "POD",
    "POD_FRAMEWORK",
    "Pod",
    "gate",
    "is_gated",
    "role_hash",
    "ungate",
]
