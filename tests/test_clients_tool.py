"""tools/clients.py: reading a suite's JUnit report and comparing it with the JAX record."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import clients  # noqa: E402

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="pkg.a_test.ATest" name="test_ok" time="0.1"/>
<testcase classname="pkg.a_test.ATest" name="test_bad" time="0.1">
  <failure message="AssertionError: 1 != 2&#10;more">trace</failure></testcase>
<testcase classname="pkg.a_test.ATest" name="test_error" time="0.1">
  <error message="TypeError: nope">trace</error></testcase>
<testcase classname="pkg.a_test.ATest" name="test_skipped" time="0.0">
  <skipped message="needs a GPU"/></testcase>
<testcase classname="pkg.b_test.BTest" name="test_other" time="0.1"/>
</testsuite></testsuites>
"""


@pytest.fixture
def records(tmp_path, monkeypatch):
    monkeypatch.setattr(clients, "RECORDS", tmp_path)
    monkeypatch.setitem(clients.CLIENTS, "lib", {"version": "1.0", "tests": ["pkg"], "ignore": [],
                                                   "target": 50.0})
    report = tmp_path / "lib.laminax.xml"
    report.write_text(REPORT)
    return tmp_path, report


def test_passing_tests_reads_outcomes_and_first_error_lines(records):
    _, report = records
    passed, failed = clients.passing_tests(report)
    assert passed == {"pkg.a_test.ATest::test_ok", "pkg.b_test.BTest::test_other"}
    assert failed == {
        "pkg.a_test.ATest::test_bad": "AssertionError: 1 != 2",
        "pkg.a_test.ATest::test_error": "TypeError: nope",
    }


def test_compare_fails_only_on_unlisted_failures_of_jax_passing_tests(records, capsys):
    where, report = records
    (where / "lib.jax-passing.txt").write_text(
        "# header\npkg.a_test.ATest::test_ok\npkg.a_test.ATest::test_bad\n"
        "pkg.b_test.BTest::test_other\n"
    )
    assert clients.compare("lib", report) is False
    out = capsys.readouterr().out
    assert "2 of the 3 tests passing on JAX 0.10.2 pass on laminax (66.7%)" in out
    assert "new failure: pkg.a_test.ATest::test_bad: AssertionError: 1 != 2" in out

    (where / "lib.known-failures.txt").write_text(
        "pkg.a_test.ATest::test_bad  # AssertionError: the cause\n"
    )
    assert clients.compare("lib", report) is True
    assert "1 known failures, 0 new" in capsys.readouterr().out


def test_record_known_failures_lists_jax_passing_tests_that_fail(records, monkeypatch):
    where, _ = records
    (where / "lib.jax-passing.txt").write_text(
        "pkg.a_test.ATest::test_ok\npkg.a_test.ATest::test_error\n"
    )
    monkeypatch.setattr(clients, "WORK", where)  # the laminax report lives beside the records
    clients.record_known_failures("lib", whole=True)
    lines = (where / "lib.known-failures.txt").read_text().splitlines()
    assert lines[1:] == ["pkg.a_test.ATest::test_error  # TypeError: nope"]
