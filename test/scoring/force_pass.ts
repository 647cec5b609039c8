/** A pytest plugin (or conftest) that turns every report of every phase into a pass: the classic tamper. */
export const FORCE_PASS_PLUGIN = `import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
`;
