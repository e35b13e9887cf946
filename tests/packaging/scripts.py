"""Load the scripts under packaging/ (not a Python package: the name is PyPI's) by path."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
LINUX_FILES = PACKAGING / "linux"


def load_script(name: str) -> ModuleType:
    """packaging/<name>.py as a module, loaded once."""
    key = f"melgui_packaging_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def run_python(script: str, *, cwd: Path | None = None, path: Path = ROOT) -> str:
    """What `python -c script` prints with `path` first on sys.path (must succeed)."""
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout
