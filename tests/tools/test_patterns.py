"""The .gitignore rules of the Python walker and the glob language of find_files."""

from __future__ import annotations

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.gitignore import IgnoreFile
from melgui.tools.glob_match import compile_glob, expand_braces

RULES = IgnoreFile.parse(
    "\n".join(
        [
            "# comment",
            "",
            "*.log",
            "!important.log",
            "build/",
            "/root_only.txt",
            "docs/**/draft.md",
            "**/cache",
            r"\#hash.txt",
            "trailing.txt   ",
            "[ab]?.tmp",
        ]
    )
)


@pytest.mark.parametrize(
    ("path", "is_dir", "verdict"),
    [
        ("app.log", False, True),
        ("deep/dir/app.log", False, True),
        ("important.log", False, False),
        ("build", True, True),
        ("build", False, None),
        ("src/build", True, True),
        ("root_only.txt", False, True),
        ("sub/root_only.txt", False, None),
        ("docs/draft.md", False, True),
        ("docs/a/b/draft.md", False, True),
        ("other/docs/draft.md", False, None),
        ("x/cache", True, True),
        ("#hash.txt", False, True),
        ("trailing.txt", False, True),
        ("a1.tmp", False, True),
        ("c1.tmp", False, None),
        ("main.py", False, None),
    ],
)
def test_gitignore_rules(path: str, is_dir: bool, verdict: bool | None) -> None:
    assert RULES.verdict(path, is_dir) is verdict


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py", "src/deep/b.py"], ["a.pyc", "py"]),
        ("src/*.py", ["src/a.py"], ["src/x/a.py", "a.py"]),
        ("src/**/*.py", ["src/a.py", "src/x/y/a.py"], ["lib/a.py"]),
        ("**/test_*.py", ["test_a.py", "t/test_b.py"], ["t/a_test.py"]),
        ("*.{md,rst}", ["README.md", "docs/i.rst"], ["a.txt"]),
        ("file?.txt", ["file1.txt"], ["file10.txt"]),
        ("[!a]*.txt", ["b.txt"], ["a.txt"]),
        ("/src/**", ["src/a", "src/b/c"], ["lib/src/a"]),
    ],
)
def test_globs(pattern: str, matches: list[str], misses: list[str]) -> None:
    predicate = compile_glob(pattern)
    assert [path for path in matches if not predicate(path)] == []
    assert [path for path in misses if predicate(path)] == []


def test_brace_expansion() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("{single}") == ["{single}"]
    with pytest.raises(ToolError, match="too many"):
        expand_braces("{a,b}" * 10)
