# pytest plugin of the sanitized runs: a test past its time limit fails instead of hanging.
"""Loaded by tests/sanitize/run.py (``-p per_test_timeout``). ``PACKEDFUN_SANITIZE_TEST_TIMEOUT``
seconds (default 600) after a test starts, every thread's Python stack is written to stderr and
``SIGALRM`` raises in the main thread, which interrupts a blocking wait (a pipe, a lock, a
``Pool`` result): the test fails with a message that names the limit, and the run goes on. The
runner's whole-run limit (``PACKEDFUN_SANITIZE_TIMEOUT``) still catches what a signal cannot.
A test marked ``@pytest.mark.sanitize_time_limit(seconds)`` gets the larger of the two limits (a
test that runs a whole foreign suite in a child process under the sanitizer)."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys

import pytest

LIMIT = int(os.environ.get("PACKEDFUN_SANITIZE_TEST_TIMEOUT", "600"))


class TimeLimitExceeded(Exception):
    """Raised in the main thread when a test runs past the limit."""


def _limit(item) -> int:
    marker = item.get_closest_marker("sanitize_time_limit")
    return max(LIMIT, int(marker.args[0])) if marker is not None and marker.args else LIMIT


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = _limit(item)

    def _expired(signum, frame):
        raise TimeLimitExceeded(f"test ran past the sanitized run's per-test limit of {limit} s")

    previous = signal.signal(signal.SIGALRM, _expired)
    faulthandler.dump_traceback_later(limit - 1, file=sys.stderr)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)
