"""Every scenario, by name."""

from __future__ import annotations

from .common import Scenario
from .features import SCENARIOS as FEATURES
from .policies import SCENARIOS as POLICIES
from .ported import SCENARIOS as PORTED
from .subgraphs import SCENARIOS as SUBGRAPHS
from .updates import SCENARIOS as UPDATES

SCENARIOS: dict[str, Scenario] = {**PORTED, **FEATURES, **SUBGRAPHS, **POLICIES, **UPDATES}
