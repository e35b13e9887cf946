"""The glob language of find_files."""

from __future__ import annotations

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.search.glob_match import GlobMatcher, compile_glob, expand_braces


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py", "src/deep/b.py"], ["a.pyc", "py"]),
        ("src/*.py", ["src/a.py"], ["src/x/a.py", "a.py"]),
        ("src/**/*.py", ["src/a.py", "src/x/y/a.py"], ["lib/a.py"]),
        ("**/test_*.py", ["test_a.py", "t/test_b.py"], ["t/a_test.py"]),
        ("*.{md,rst}", ["README.md", "docs/i.rst"], ["a.txt", "notes.mdx", "i.rst.bak"]),
        ("log{1..3}.txt", ["log1.txt", "a/log3.txt"], ["log4.txt", "log{1..3}.txt"]),
        (r"weird\[1\].txt", ["weird[1].txt"], ["weird1.txt"]),
        ("src/{a,b/**}/*.py", ["src/a/x.py", "src/b/x.py", "src/b/c/d/x.py"], ["src/c/x.py"]),
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


def test_records_keep_matching_paths_and_drop_hidden_ones() -> None:
    block = b"./a.py\x00./.git/x.py\x00./src/.cache.py\x00./src/b.py\x00./b.pyi\x00./src/c/d.py\x00"
    assert GlobMatcher("**/*.py").select_records(block) == [
        b"./a.py",
        b"./src/b.py",
        b"./src/c/d.py",
    ]
    assert GlobMatcher("src/*.py").select_records(block) == [b"./src/b.py"]
    assert GlobMatcher("src/**").select_records(block) == [b"./src/b.py", b"./src/c/d.py"]
    assert GlobMatcher("*.md").select_records(block) == []


def test_ripgrep_prefilters_by_name_when_the_names_are_plain_globs() -> None:
    assert GlobMatcher("**/test_*.py").name_globs == ["test_*.py"]
    assert GlobMatcher("**/test_*.py").names_only
    assert GlobMatcher("src/**/*.{py,pyi}").name_globs == ["*.py", "*.pyi"]
    assert not GlobMatcher("src/**/*.{py,pyi}").names_only
    assert GlobMatcher("src/**").name_globs is None


@pytest.mark.parametrize("pattern", ["", "  ", "./", "a\x00b"])
def test_empty_or_nul_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(ToolError, match=r"empty|NUL"):
        GlobMatcher(pattern)
