"""Which namespaces kuota manages Jobs in: one rule for the webhook and the Job controller.

Kueue v0.19 made ``ManagedJobsNamespaceSelectorAlwaysRespected`` GA and locked
it on: a job in a namespace that ``managedJobsNamespaceSelector`` does not
select is not Kueue's, whether it names a queue or not.  kuota keeps that rule
and adds one guarantee Kueue leaves to its default selector: ``kube-system``
and kuota's own namespace are never managed, whatever the selector says, so a
selector that happens to match them cannot make kuota hold the system's own
Jobs (or its own).

"Not managed" means untouched: no suspension on create, no Workload, no
unsuspend check, no quota rules on update — the Job runs as if kuota were not
installed.  Three places apply the rule and must agree, so all of them take
it from here:

* the API server, through the ``namespaceSelector`` of every Job entry of
  kuota's webhook registrations (:meth:`ManagedNamespaces.registration_selector`):
  a Job in an unmanaged namespace never reaches the webhook;
* the webhook's own decision (:func:`is_managed_namespace`), for a request
  that reaches it anyway (an older registration, a test);
* the scheduler's Job controller (the same function), which must neither
  make a Workload for such a Job nor suspend it.

Selectors are raw label selectors (``matchLabels``/``matchExpressions``, as
in a Configuration file or a flag), matched by the API layer's one selector
matcher.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scheduler.api.config import DEFAULT_NAMESPACE, Configuration
from scheduler.api.validation.formats import selector_matches

NAME_LABEL: Final = "kubernetes.io/metadata.name"
"""Set by the API server on every namespace (immutable): what a selector can match a name by."""
SYSTEM_NAMESPACE: Final = "kube-system"


@dataclass(frozen=True, slots=True, kw_only=True)
class ManagedNamespaces:
    """The settings the rule depends on: kuota's namespace and ``managedJobsNamespaceSelector``.

    ``selector`` None is Kueue's default (every namespace but the two never
    managed); ``{}`` selects every namespace, and still not those two.
    """

    kuota_namespace: str = DEFAULT_NAMESPACE
    selector: Mapping[str, Any] | None = None

    @classmethod
    def from_configuration(cls, config: Configuration) -> ManagedNamespaces:
        """Pure: the settings of a Kueue Configuration (``namespace``, the selector)."""
        return cls(
            kuota_namespace=config.namespace,
            selector=raw_selector(config),
        )

    @property
    def never_managed(self) -> tuple[str, ...]:
        """Pure: ``kube-system`` and kuota's namespace, sorted."""
        return tuple(sorted({SYSTEM_NAMESPACE, self.kuota_namespace}))

    def registration_selector(self) -> dict[str, Any]:
        """Pure: the ``namespaceSelector`` that makes the API server apply the rule.

        The exclusion of :attr:`never_managed` by name comes first, then the
        configured selector's own ``matchLabels`` and ``matchExpressions``
        (a label selector's terms are ANDed, so this is exactly the rule).
        """
        merged: dict[str, Any] = {}
        selector = self.selector or {}
        labels = selector.get("matchLabels")
        if isinstance(labels, Mapping) and labels:
            merged["matchLabels"] = dict(labels)
        expressions = selector.get("matchExpressions")
        merged["matchExpressions"] = [
            {"key": NAME_LABEL, "operator": "NotIn", "values": list(self.never_managed)},
            *copy.deepcopy(list(expressions) if isinstance(expressions, list) else []),
        ]
        return merged


def is_managed_namespace(
    namespace: str, labels: Mapping[str, str], settings: ManagedNamespaces
) -> bool:
    """Whether kuota manages Jobs in ``namespace`` (with these labels): pure.

    False for ``kube-system`` and kuota's namespace, else whether the
    configured selector (Kueue's default when None) matches ``labels``.
    """
    if namespace in settings.never_managed:
        return False
    if settings.selector is None:
        return True
    return selector_matches(settings.selector, labels)


def name_only_labels(namespace: str, settings: ManagedNamespaces) -> dict[str, str] | None:
    """The labels the rule needs for ``namespace`` when its selector reads only the name label
    (the API server sets it on every namespace), else None (the labels must be read): pure."""
    selector = settings.selector or {}
    keys = set(selector.get("matchLabels") or {})
    for expression in selector.get("matchExpressions") or []:
        keys.add(expression.get("key") if isinstance(expression, Mapping) else None)
    if keys - {NAME_LABEL}:
        return None
    return {NAME_LABEL: namespace}


def raw_selector(config: Configuration) -> dict[str, Any]:
    """Pure: a Configuration's ``managedJobsNamespaceSelector`` as a raw label selector."""
    selector = config.managed_jobs_namespace_selector
    raw: dict[str, Any] = {}
    if selector.match_labels:
        raw["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        raw["matchExpressions"] = [
            {
                "key": item.key,
                "operator": item.operator,
                **({"values": list(item.values)} if item.values else {}),
            }
            for item in selector.match_expressions
        ]
    return raw
