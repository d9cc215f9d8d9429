# Shared Hypothesis settings of the property tests: short by default, long with PACKEDFUN_FUZZ=long.
"""``PACKEDFUN_FUZZ=long`` (or a number: the examples per test) runs every property test much
longer; the default keeps the whole fuzzing part of the suite to a few seconds, and the full test
run (``PACKEDFUN_TEST_FULL=1``) runs 300 examples per test. Each test records
how many examples it ran in ``EXAMPLES`` (printed at the end of a run with ``-s``)."""

from __future__ import annotations

import os

import suite
from hypothesis import HealthCheck, settings

__all__ = ["EXAMPLES", "PROFILE", "count"]

_VALUE = os.environ.get("PACKEDFUN_FUZZ", "").strip().lower()
_COMMON = {
    "deadline": None,  # a loaded 2-core machine must not turn slow examples into failures
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "derandomize": False,
    "database": None,  # no .hypothesis folder in the tree
    "print_blob": True,  # a failure prints the reproducer
}
settings.register_profile("packedfun-default", max_examples=60, **_COMMON)
settings.register_profile("packedfun-long", max_examples=5000, **_COMMON)
settings.register_profile("packedfun-full", max_examples=300, **_COMMON)
if _VALUE.isdigit():
    settings.register_profile("packedfun-custom", max_examples=int(_VALUE), **_COMMON)
    PROFILE = "packedfun-custom"
elif _VALUE == "long":
    PROFILE = "packedfun-long"
elif _VALUE == "" and suite.FULL:
    PROFILE = "packedfun-full"
elif _VALUE in ("", "short", "default"):
    PROFILE = "packedfun-default"
else:
    raise ValueError(f"PACKEDFUN_FUZZ must be 'long', 'short' or a number, got {_VALUE!r}")
settings.load_profile(PROFILE)

EXAMPLES: dict[str, int] = {}


def count(name: str) -> None:
    """Counts one example of the property test `name`."""
    EXAMPLES[name] = EXAMPLES.get(name, 0) + 1
