"""The builder of kuota's (Kueue's) ``config.kueue.x-k8s.io/v1beta2`` Configuration.

configuration().fair_sharing("LessThanOrEqualToFinalShare")
configuration().set(resources={"excludeResourcePrefixes": ["example.com/"]})
"""

from __future__ import annotations

from typing import Any, Self

from tests.builders.base import Built

CONFIG = "config.kueue.x-k8s.io/v1beta2"


class configuration(Built):  # noqa: N801 - reads like a manifest
    """A Configuration: apiVersion and kind only until fields are set."""

    def __init__(self) -> None:
        self.raw = {"apiVersion": CONFIG, "kind": "Configuration"}

    def fair_sharing(self, *strategies: str) -> Self:
        """``fairSharing`` on, with these ``preemptionStrategies`` (none: Kueue's default)."""
        section: dict[str, Any] = {"preemptionStrategies": list(strategies)} if strategies else {}
        self.raw["fairSharing"] = section
        return self

    def admission_fair_sharing(
        self, half_life: str = "168h", sampling: str = "5m", **weights: float
    ) -> Self:
        """``admissionFairSharing`` with these durations and ``resourceWeights``."""
        section: dict[str, Any] = {
            "usageHalfLifeTime": half_life,
            "usageSamplingInterval": sampling,
        }
        if weights:
            section["resourceWeights"] = dict(weights)
        self.raw["admissionFairSharing"] = section
        return self

    def transformation(self, resource: str, strategy: str = "Retain", **outputs: str) -> Self:
        """A ``resources.transformations`` entry: ``transformation("cpu", cpu_credits="1")``."""
        transformations = self.raw.setdefault("resources", {}).setdefault("transformations", [])
        transformations.append({"input": resource, "strategy": strategy, "outputs": outputs})
        return self

    def model(self) -> Any:
        from tests.builders.models import model

        return model(self)
