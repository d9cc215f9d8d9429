# .ci/run installs nothing beyond the README's two commands, and stops when the README drifts.
"""The README's ``pip install`` commands are the whole set-up: CI must not quietly add to them."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CI_RUN = REPO_ROOT / ".ci" / "run"
README = REPO_ROOT / "README.md"
INSTALLERS = ("pip", "pip3", "apt-get", "apt", "conda", "mamba", "uv", "dnf", "yum", "apk", "brew",
              "curl", "wget", "easy_install", "pipx")  # fmt: skip

pytestmark = pytest.mark.skipif(not CI_RUN.is_file(), reason="not running from a source checkout")


QUICK_CMD = 'pip install ".[test]" && python -m pytest'
FULL_CMD = 'pip install ".[test]" && PACKEDFUN_TEST_FULL=1 python -m pytest'


def _commands() -> dict:
    """The README commands .ci/run checks, by variable name (DEMO_CMD, QUICK_CMD, FULL_CMD)."""
    found = dict(re.findall(r"^(\w+_CMD)='([^']*)'$", CI_RUN.read_text(), re.M))
    assert set(found) == {"DEMO_CMD", "QUICK_CMD", "FULL_CMD"}, found
    return found


def _code_lines() -> list:
    lines = []
    for line in CI_RUN.read_text().splitlines():
        code = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#!") else ""
        if code:
            lines.append(code)
    return lines


def test_ci_runs_exactly_the_readme_commands():
    readme_lines = README.read_text().splitlines()
    for name, cmd in _commands().items():
        assert cmd in readme_lines, f"{name} is not a README line: {cmd}"
    assert _commands()["QUICK_CMD"] == QUICK_CMD
    assert _commands()["FULL_CMD"] == FULL_CMD


def test_ci_runs_the_full_command():
    runs = [code for code in _code_lines() if code.startswith('bash -c "set -euo pipefail; $')]
    assert runs == [
        'bash -c "set -euo pipefail; $DEMO_CMD"',
        'bash -c "set -euo pipefail; $FULL_CMD"',
    ]


def test_ci_installs_nothing_else():
    offenders = []
    for code in _code_lines():
        if re.match(r"^\w+_CMD='", code):
            continue  # the README's own commands
        words = shlex.split(code.replace("$(", " ").replace(")", " "), posix=True)
        # by the program's base name: "$VENV/bin/pip" and pip3.11 are pip too
        names = {re.sub(r"[\d.]+$", "", w.rsplit("/", 1)[-1]) for w in words}
        hits = sorted(names & set(INSTALLERS))
        if hits or "ensurepip" in code or "-m pip" in code:
            offenders.append(code)
    assert not offenders, f".ci/run installs beyond the README's commands: {offenders}"


def test_installer_check_catches_an_extra_install(tmp_path, monkeypatch):
    # The check above must be able to fail: feed it a script with an extra pip line.
    fake = tmp_path / "run"
    fake.write_text(CI_RUN.read_text() + '\npip install -q "torch==2.13.0"\napt-get install -y x\n')
    monkeypatch.setattr(sys.modules[__name__], "CI_RUN", fake)
    with pytest.raises(AssertionError, match="torch==2.13.0"):
        test_ci_installs_nothing_else()
    extras = ('"$VENV/bin/pip" install jax', "pip3.11 install jax", "/usr/bin/uv pip install jax",
              "python3 -m pip install jax")  # fmt: skip
    for extra in extras:
        fake.write_text(CI_RUN.read_text() + f"\n{extra}\n")
        with pytest.raises(AssertionError, match="jax"):
            test_ci_installs_nothing_else()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run .ci/run")
@pytest.mark.parametrize("command", [QUICK_CMD, FULL_CMD])
def test_ci_stops_when_the_readme_drops_a_command(tmp_path, command):
    (tmp_path / ".ci").mkdir()
    shutil.copy(CI_RUN, tmp_path / ".ci" / "run")
    lines = README.read_text().splitlines()
    assert command in lines
    (tmp_path / "README.md").write_text("\n".join(line for line in lines if line != command))
    proc = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True,
                          timeout=60, check=False, env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "README.md no longer contains the command" in proc.stderr
    assert "virtual environment" not in proc.stdout
