"""find_files gives the same answer whether ripgrep pre-filters the names (a file type)
or Python matches every listed path, on patterns where the two could part: braces, `**`,
case, hidden files and folders, .gitignore'd files (a file rule, a folder rule, a
negation, a nested .gitignore), a folder whose name matches the glob.

ripgrep's `--glob` alone would list a file the glob names even when .gitignore excludes
it; the exact lists below pin that such files stay out. This tree's negation (`!keep.log`)
keeps the rules from becoming ripgrep overrides, so it is listed and matched in Python;
test_find_files_rg_globs has a tree whose rules ripgrep is given.
"""

from __future__ import annotations

import pytest

from melgui.tools.context import ToolContext
from melgui.tools.search.project_search import FIND_FILES_TOOL
from melgui.tools.search.ripgrep import find_ripgrep
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

FILES = [
    "a.py",
    "A.PY",
    "b.Py",
    "src/app.py",
    "src/gen_models.py",  # ignored by a file rule
    "src/util/test_util.py",
    "src/util/helpers.txt",
    "src/x.py/inner.txt",  # a folder named like the glob
    "src/x.py/inner.py",
    "tests/test_app.py",
    "tests/data/[1].txt",
    "build/out.py",  # ignored by a folder rule
    "logs/app.log",  # ignored
    "logs/keep.log",  # negation: kept
    "docs/guide.md",
    "docs/tmp/scratch.md",  # ignored by a nested .gitignore
    "docs/caf\u00e9 notes.md",
    ".env.py",  # hidden file at the top
    ".tools/run.py",  # hidden folder
    "src/.hid/secret.py",
    "src/.cache.py",
]
GITIGNORE = "build/\n*.log\n!keep.log\nsrc/gen_*.py\n"
PATTERNS = [
    "*.py",
    "*.PY",
    "*.{py,PY,Py}",
    "**/*.py",
    "**/test_*.py",
    "src/**",
    "src/**/*.py",
    "src/{util,x.py}/*",
    "**/gen_*.py",
    "gen_*.py",
    "*.log",
    "**/keep.log",
    "logs/*",
    "*.md",
    "docs/**",
    "**/*caf\u00e9*",
    ".env.py",
    "**/.hid/*",
    "**/run.py",
    "x.py",
    "**/x.py/**",
    "inner.*",
    "[ab].py",
    "*[[]1[]]*",
    "tests/*/*.txt",
    "?.py",
    "*",
    "**",
]


@pytest.fixture
def tree(workspace: Workspace) -> Workspace:
    for name in FILES:
        path = workspace.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name + "\n")
    (workspace.root / ".gitignore").write_text(GITIGNORE)
    (workspace.root / "docs" / ".gitignore").write_text("tmp/\n")
    return workspace


async def found(workspace: Workspace, engine: str, pattern: str) -> str:
    settings = ToolSettings(search_engine=engine)  # type: ignore[arg-type]
    outcome = await FIND_FILES_TOOL.run(ToolContext(workspace, settings), {"pattern": pattern})
    assert outcome.status == "ok", outcome.content
    return outcome.content


async def test_ripgrep_and_python_agree_on_tricky_patterns(tree: Workspace) -> None:
    if find_ripgrep() is None:
        pytest.skip("no rg executable")
    for pattern in PATTERNS:
        assert await found(tree, "ripgrep", pattern) == await found(tree, "python", pattern), (
            pattern
        )


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_ignored_and_hidden_files_stay_out_even_when_the_glob_names_them(
    tree: Workspace, engine: str
) -> None:
    if engine == "ripgrep" and find_ripgrep() is None:
        pytest.skip("no rg executable")

    async def paths(pattern: str) -> list[str]:
        text = await found(tree, engine, pattern)
        return [] if text.startswith("No files match") else text.splitlines()[1:]

    assert await paths("**/gen_*.py") == []
    assert await paths("*.log") == ["logs/keep.log"]
    assert await paths("*.py") == [
        "a.py",
        "src/app.py",
        "src/util/test_util.py",
        "src/x.py/inner.py",
        "tests/test_app.py",
    ]
    assert await paths("*.PY") == ["A.PY"]  # case counts
    assert await paths("docs/**") == ["docs/caf\u00e9 notes.md", "docs/guide.md"]
    assert await paths("x.py") == []  # a folder is not a file
    assert await paths("**/.hid/*") == [] and await paths(".env.py") == []
    assert await paths("*[[]1[]]*") == ["tests/data/[1].txt"]
