"""The wheel: every module and the top-level resources/ folder go in, and are found there.

pyproject lists the packages by hand (setuptools' `find` cannot see `melgui.assets`, the
top-level resources/ folder mapped into the package), so a new subpackage must be listed:
the first test says which one is missing. The second builds the wheel from a copy of the
checkout (pip, in an isolated build environment) and runs `melgui.resources` from it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from melgui import resources
from tests.packaging.scripts import ROOT, run_python

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def tree_packages() -> set[str]:
    return {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "melgui").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }


def test_every_package_of_the_tree_is_listed_for_the_wheel() -> None:
    listed = set(SETUPTOOLS["packages"])
    missing = sorted(tree_packages() - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert listed - tree_packages() == {"melgui.assets"}


def test_resources_folder_is_mapped_to_the_package_data_the_module_reads() -> None:
    assert SETUPTOOLS["package-dir"] == {f"melgui.{resources.ASSETS}": "resources"}
    assert SETUPTOOLS["package-data"] == {f"melgui.{resources.ASSETS}": ["**/*"]}
    # From a checkout the module reads the top-level folder itself.
    assert Path(str(resources.resources_root())) == ROOT / "resources"
    assert resources.icon_svg_path() == ROOT / "resources" / "icons" / "melgui.svg"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout (the build writes build/ and egg-info)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("melgui", "resources"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("melgui-*.whl")
    return built


@pytest.mark.slow
@pytest.mark.timeout(700)
def test_wheel_holds_every_module_and_resource(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "melgui").rglob("*.py")}
    assert not sorted(modules - names)
    assets = {
        f"melgui/{resources.ASSETS}/{p.relative_to(ROOT / 'resources').as_posix()}"
        for p in (ROOT / "resources").rglob("*")
        if p.is_file()
    }
    assert f"melgui/{resources.ASSETS}/icons/melgui-512.png" in assets
    assert not sorted(assets - names)
    assert not [n for n in names if n.startswith("resources/")]


@pytest.mark.slow
@pytest.mark.timeout(700)
def test_installed_wheel_finds_its_own_icons(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import melgui.resources as r\n"
        "for p in [r.icon_svg_path(), *r.icon_png_paths()]: print(p)\n"
    )
    paths = [Path(line) for line in run_python(script, cwd=tmp_path, path=site).splitlines()]
    icons = site / "melgui" / resources.ASSETS / "icons"
    expected = [icons / "melgui.svg"]
    expected += [icons / f"melgui-{size}.png" for size in resources.ICON_SIZES]
    assert paths == expected
    assert all(p.is_file() for p in paths)
