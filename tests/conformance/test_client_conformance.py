"""The official MCP conformance suite (@modelcontextprotocol/conformance, pinned with its
Node in .ci/conformance) in client mode, with plain `melgui exec` as the client
(client.sh: the same flags for every scenario, the scenario's credentials in an ordinary
mcp.json through one mapping), `$BROWSER` as the sign-in's stand-in, and a model that
calls each offered tool once. Every client scenario the suite lists must pass but those
expected-failures.yml names (only what the official SDKs mark so); a stale entry fails
too. Each scenario's result is printed (`pytest -s`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fakes.oauth import browser_env
from tests.fakes.scripted_server import ScriptedOpenAI
from tests.fakes.tool_caller import answer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BIN = ROOT / ".ci" / "conformance" / "node_modules" / ".bin"

pytestmark = pytest.mark.skipif(
    not (BIN / "conformance").exists(),
    reason="the conformance suite is not installed (.ci/run installs it in .ci/conformance)",
)


@pytest.fixture
def tool_caller() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as model:
        model.strict = False
        model.on(lambda request: True, answer)
        yield model


def client_scenarios(env: dict[str, str]) -> list[str]:
    listed = subprocess.run(
        [str(BIN / "conformance"), "list"], capture_output=True, text=True, env=env, check=True
    ).stdout
    part = listed.split("Client scenarios", 1)[1]
    return [line.split()[1] for line in part.splitlines() if line.startswith("  - ")]


def expected_failures() -> set[str]:
    lines = (HERE / "expected-failures.yml").read_text(encoding="utf-8").splitlines()
    return {line.split("- ", 1)[1].strip() for line in lines if line.startswith("  - ")}


# Scenarios run a few at a time; one that fails then runs again alone, and only its lone
# verdict counts, as the Python SDK's CI does (.github/actions/conformance/run-client.sh:
# a scenario with real-time waits can miss them under contention, a real failure fails
# alone too).
WORKERS = max(1, min(3, os.cpu_count() or 1))
SCENARIO_TIMEOUT = 150  # seconds for the suite to give one scenario's verdict


def run_scenario(scenario: str, env: dict[str, str], folder: Path) -> tuple[bool, str]:
    try:
        result = subprocess.run(
            [str(BIN / "conformance"), "client", "--command", str(HERE / "client.sh"),
             "--scenario", scenario, "--timeout", "60000",
             "--output-dir", str(folder / "results")],
            capture_output=True, text=True, timeout=SCENARIO_TIMEOUT, env=env, cwd=folder,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, f"no verdict within {SCENARIO_TIMEOUT} s"
    return result.returncode == 0, result.stdout[-1500:]


@pytest.mark.timeout(1200)
def test_every_client_scenario_passes_but_the_listed_ones(
    tool_caller: ScriptedOpenAI, tmp_path: Path
) -> None:
    browser, _ = browser_env(tmp_path)
    env = {
        **os.environ,
        **browser,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "MELGUI_PYTHON": sys.executable,
        "MELGUI_CONFORMANCE_MODEL": tool_caller.base_url,
        "TMPDIR": str(tmp_path),  # client.sh's mcp.json files
    }
    scenarios = client_scenarios(env)
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = pool.map(lambda scenario: run_scenario(scenario, env, tmp_path), scenarios)
        verdicts = dict(zip(scenarios, runs, strict=True))
    alone = [scenario for scenario, (passed, _) in verdicts.items() if not passed]
    for scenario in alone:
        verdicts[scenario] = run_scenario(scenario, env, tmp_path)
    for scenario, (passed, _) in verdicts.items():
        again = " (run again alone)" if scenario in alone else ""
        print(f"{scenario}: {'passed' if passed else 'failed'}{again}")
    failed = {name: out for name, (passed, out) in verdicts.items() if not passed}
    assert len(scenarios) >= 26
    unexpected = {name: out for name, out in failed.items() if name not in expected_failures()}
    assert not unexpected, unexpected
    assert set(failed) == expected_failures(), "stale entries: passing now"
