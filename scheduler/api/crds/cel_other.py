"""The LocalQueue and AdmissionCheck rules the API server enforces itself, as CEL.

As for the Workload (``cel_workload.py``): each rule has a Python twin with the
same id, in ``scheduler/api/validation/localqueue.py`` and ``admissioncheck.py``,
and the same words (``scheduler/api/rule_text.py``;
docs/validation.md#rules-enforced-by-the-api-server).  The rules that compare
with the stored object are on the root, where ``oldSelf`` is the whole stored
object, so that removing the field (or the spec) is judged too.
"""

from __future__ import annotations

from typing import Final

from scheduler.api import rule_text as text
from scheduler.api.crds.cel_kit import message_format, whole_match
from scheduler.api.crds.nodes import Cel

NAME_LENGTH: Final = 253


def _set(var: str, name: str) -> str:
    return f"(has({var}.spec) && has({var}.spec.{name}))"


CLUSTER_QUEUE_NAME: Final = Cel(
    twin="LQ-1",
    rule="self == '' || " + whole_match(text.DNS_SUBDOMAIN),
    message_expression=message_format(
        '"{name}" is not a valid name: ' + text.SUBDOMAIN_HINT, name="self"
    ),
)
CLUSTER_QUEUE_KEPT: Final = Cel(
    twin="LQ-2",
    rule=f"!({_set('oldSelf', 'clusterQueue')} && oldSelf.spec.clusterQueue != '') || "
    f"({_set('self', 'clusterQueue')} && self.spec.clusterQueue == oldSelf.spec.clusterQueue)",
    message_expression=message_format(
        text.CLUSTER_QUEUE_IMMUTABLE, old="oldSelf.spec.clusterQueue"
    ),
    field_path=".spec.clusterQueue",
)
CONTROLLER_SET: Final = Cel(
    twin="AC-1",
    rule="self.controllerName != ''",
    message=text.CONTROLLER_NEEDED,
    field_path=".controllerName",
)
CONTROLLER_LENGTH: Final = Cel(
    twin="AC-1",
    rule=f"size(self.controllerName) <= {NAME_LENGTH}",
    message=text.CONTROLLER_LENGTH,
    field_path=".controllerName",
)
CONTROLLER_KEPT: Final = Cel(
    twin="AC-2",
    rule=f"!{_set('oldSelf', 'controllerName')} || "
    f"({_set('self', 'controllerName')} && "
    "self.spec.controllerName == oldSelf.spec.controllerName)",
    message_expression=message_format(text.IMMUTABLE, old="oldSelf.spec.controllerName"),
    field_path=".spec.controllerName",
)

EVERY_RULE: Final = (
    CLUSTER_QUEUE_NAME,
    CLUSTER_QUEUE_KEPT,
    CONTROLLER_SET,
    CONTROLLER_LENGTH,
    CONTROLLER_KEPT,
)
"""Every CEL rule of these kinds, for the tests that hold each against its twin."""
