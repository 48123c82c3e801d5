"""Hypothesis profiles for the assignor's property tests: CI runs a fixed, derandomized set."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "assignor-dev",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "assignor-ci",
    parent=settings.get_profile("assignor-dev"),
    derandomize=True,
    print_blob=True,
)
settings.register_profile(
    "assignor-soak", parent=settings.get_profile("assignor-dev"), max_examples=1000
)
settings.load_profile(
    os.environ.get("SEGUE_HYPOTHESIS_PROFILE")
    or ("assignor-ci" if os.environ.get("CI") == "true" else "assignor-dev")
)
