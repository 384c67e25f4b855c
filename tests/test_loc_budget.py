"""The line budget: every package within tools/loc_budget.toml, and the check fails past it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOC = ROOT / "tools" / "loc.py"


def _check(*extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LOC), "--check", *extra], cwd=ROOT,
                          capture_output=True, text=True)


def test_every_package_is_within_its_budget():
    result = _check()
    assert result.returncode == 0, result.stdout


def test_a_package_past_its_budget_fails_the_check(tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text("[budget]\npytree = 6000\ncore = 100\ndispatch = 6000\npjit = 6000\n"
                      "hostcb = 6000\nexport = 6000\nlaminax = 6000\n")
    result = _check("--budget", str(budget))
    assert result.returncode == 1
    assert "over budget" in result.stdout and "core" in result.stdout.splitlines()[-1]


def test_a_package_without_a_budget_fails_the_check(tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text("[budget]\ncore = 25000\n")
    result = _check("--budget", str(budget))
    assert result.returncode == 1
    assert "dispatch" in result.stdout.splitlines()[-1]
