"""Settings shared by the fuzz tests (tests/fuzz/): bounded for CI, deeper by hand.

`TF_FUZZ_SCALE=20 pytest tests/fuzz` runs twenty times the examples of every fuzz test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALE = max(1, int(os.environ.get("TF_FUZZ_SCALE", "1")))


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
