# pytest plugin of the sanitized runs: a test past its time limit fails instead of hanging.
"""Loaded by tests/sanitize/run.py (``-p per_test_timeout``). ``PACKEDFUN_SANITIZE_TEST_TIMEOUT``
seconds (default 300) after a test starts, every thread's Python stack is written to stderr and
``SIGALRM`` raises in the main thread, which interrupts a blocking wait (a pipe, a lock, a
``Pool`` result): the test fails with a message that names the limit, and the run goes on. The
runner's whole-run limit (``PACKEDFUN_SANITIZE_TIMEOUT``) still catches what a signal cannot."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys

import pytest

LIMIT = int(os.environ.get("PACKEDFUN_SANITIZE_TEST_TIMEOUT", "300"))


class TimeLimitExceeded(Exception):
    """Raised in the main thread when a test runs past the limit."""


def _expired(signum, frame):
    raise TimeLimitExceeded(f"test ran past the sanitized run's per-test limit of {LIMIT} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    previous = signal.signal(signal.SIGALRM, _expired)
    faulthandler.dump_traceback_later(LIMIT - 1, file=sys.stderr)
    signal.alarm(LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)
