"""Text shared by the two places a rule runs: Python validation and the CRDs' CEL rules.

Some Workload rules are enforced twice: by the API server, as CEL rules in
the CRD (``x-kubernetes-validations``, generated from
``scheduler/api/crds/cel_workload.py``), and by the Python validation that
``kuota validate`` runs offline (docs/validation.md#rules-enforced-by-the-api-server).
Both must answer with the same words, so the name grammars and the fixed
messages live here, once; the CEL side builds its dynamic messages from the
same pieces in ``messageExpression``.
"""

from __future__ import annotations

from typing import Final

DNS_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN: Final = rf"{DNS_LABEL}(\.{DNS_LABEL})*"

SUBDOMAIN_HINT: Final = (
    'use at most 253 lower-case letters, digits, "-" or ".", starting and ending with a letter or '
    "digit"
)
LABEL_HINT: Final = (
    'use at most 63 lower-case letters, digits or "-", starting and ending with a letter or digit'
)

AT_LEAST_ONE_POD_SET: Final = "must list at least 1 pod set"
COUNT_NOT_NEGATIVE: Final = "must be greater than or equal to 0"
MIN_COUNT_AT_LEAST_ONE: Final = "must be at least 1"
MIN_COUNT_ABOVE_COUNT: Final = "must be less than or equal to count ({count})"
MIN_COUNT_TWICE: Final = (
    "{count} pod sets use minCount; at most one pod set may use partial admission"
)
KIND_NOT_OF_GROUP: Final = (
    "kind {kind} does not belong to group {group}: use PriorityClass with scheduling.k8s.io, "
    "WorkloadPriorityClass with kueue.x-k8s.io"
)
PRIORITY_NEEDED: Final = "required when priorityClassRef is set: copy the class's value here"
EXECUTION_TIME_AT_LEAST_ONE: Final = "must be at least 1 (omit it for no limit)"
GATE_NAME_LENGTH: Final = "must be 1 to 63 characters"
CLUSTER_NAME_EXCLUSIVE: Final = "clusterName and nominatedClusterNames cannot both be set"
QUEUE_NAME_WHILE_RESERVED: Final = (
    'cannot change while the workload holds a quota reservation; it was "{old}"'
)
REF_ADDED_WHILE_RESERVED: Final = (
    "cannot be added or removed while the workload holds a quota reservation"
)
REF_FIELD_WHILE_RESERVED: Final = "cannot change while the workload holds a quota reservation"
PRIORITY_CLASS_WHILE_RESERVED: Final = (
    "a PriorityClass reference cannot change while the workload holds a quota reservation "
    "(a WorkloadPriorityClass reference can)"
)
EXECUTION_TIME_WHILE_ADMITTED: Final = "cannot change while the workload is admitted"
CLUSTER_NAME_SET: Final = 'is immutable once set; it was "{old}"'
IMMUTABLE: Final = 'is immutable; it was "{old}"'
CLUSTER_QUEUE_IMMUTABLE: Final = (
    'is immutable; it was "{old}": create a new LocalQueue to point at another ClusterQueue'
)
CONTROLLER_NEEDED: Final = (
    "required: name the controller that handles this check, e.g. kueue.x-k8s.io/multikueue"
)
CONTROLLER_LENGTH: Final = "must be at most 253 characters"
