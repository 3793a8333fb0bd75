"""pytest plugin loaded for every pytest-based CTest entry (tests/CMakeLists.txt: -p
simdup_skip_policy): with SIMDUP_REQUIRE_ALL=1, which CTest sets, a skipped test is a failure
unless ALLOWED_SKIPS justifies it, and a file in which no test ran fails too.

Why: each pytest file is one CTest entry, and a file whose tests all skip (a missing binary,
package or server) would report "Passed". scripts/install-deps.sh installs everything the tests
need, so on CI a skip means a broken setup, not a reason to pass. Run pytest by hand (without
the variable) and skips behave as usual.
"""

import os

import pytest

# Skips that stay skips under SIMDUP_REQUIRE_ALL=1: a substring of the skip reason and why it is
# acceptable on CI. Each one is printed with its reason at the end of the run.
ALLOWED_SKIPS = {}

_STRICT = os.environ.get("SIMDUP_REQUIRE_ALL") == "1"


def _reason(longrepr):
    # A skip's longrepr is (file, line, "Skipped: reason").
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _justification(reason):
    for needle, why in ALLOWED_SKIPS.items():
        if needle in reason:
            return why
    return None


class _Policy:
    def __init__(self):
        self.ran = 0
        self.allowed = []

    def _judge(self, report):
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = _reason(report.longrepr)
        why = _justification(reason)
        if why is not None:
            self.allowed.append((report.nodeid, reason, why))
            return
        report.outcome = "failed"
        report.longrepr = (f"skipped ({reason}), but SIMDUP_REQUIRE_ALL=1: CI must have what this "
                           "test needs (scripts/install-deps.sh installs it), or the skip must be "
                           "justified in tests/support/simdup_skip_policy.py ALLOWED_SKIPS")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" and report.passed:
            self.ran += 1
        self._judge(report)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        # A module-level skip (pytestmark skipif, importorskip) skips the whole file here.
        outcome = yield
        self._judge(outcome.get_result())

    def pytest_sessionfinish(self, session, exitstatus):
        if exitstatus == 0 and self.ran == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        for nodeid, reason, why in self.allowed:
            terminalreporter.write_line(f"allowed skip: {nodeid}: {reason} ({why})")
        if self.ran == 0:
            terminalreporter.write_line(
                "SIMDUP_REQUIRE_ALL=1: no test passed in this file, so it fails", red=True)


def pytest_configure(config):
    if _STRICT:
        config.pluginmanager.register(_Policy(), "simdup_skip_policy_strict")
