"""The course tests' shared helper process: one grader helper (sandbox.Sandbox) for the whole session."""

from __future__ import annotations

import pytest

from minitensor.course.sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox():
    with Sandbox() as helper:
        yield helper
