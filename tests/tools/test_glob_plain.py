"""Plain globs (names, `*`, `?`, `**`) get a regex of their own, without wcmatch's guard
against "." and ".." components; on every path a listing can hold it decides exactly as
wcmatch does."""

from __future__ import annotations

import re

import pytest
from wcmatch import glob as wcglob

from melgui.tools.search.glob_match import (
    GlobMatcher,
    _drop_any_depth_prefix,
    _flags,
    _plain_regex,
    expand_braces,
)

PLAIN = [
    "*.py",
    "test_*.py",
    "*",
    "**",
    "?",
    "a?c.txt",
    "src/*.py",
    "src/**",
    "src/**/*.py",
    "src/**/test_*.py",
    "*/test/*.py",
    "**/test/**",
    "**/x/**/y",
    "a/**/**/b",
    "a/**b",
    "a**b/c",
    "*/*",
    "*/**/*",
    "docs/*.m?",
    "weird (1)+$^.txt",
    "déjà/*.txt",
    "{not,braces}",
    "a.b/c",
    "~/x",
    "!x",
]
PATHS = [
    "a.py",
    "test_a.py",
    "x/test_b.py",
    "src/a.py",
    "src/deep/b.py",
    "src/deep/test_c.py",
    "src/test_d.py",
    "src",
    "srcx/a.py",
    "lib/test/m.py",
    "lib/test/deep/m.py",
    "test/m.py",
    "t/test/u/v/w.txt",
    "x/y",
    "q/x/r/y",
    "x/q/y",
    "a/b",
    "a/m/n/b",
    "a/xb",
    "a/b/c",
    "ab/c",
    "aXYb/c",
    "docs/i.md",
    "docs/i.mdx",
    "weird (1)+$^.txt",
    "déjà/vu.txt",
    "{not,braces}",
    "a.b/c",
    "aXb/c",
    "~/x",
    "!x",
    "abc.txt",
    "a/c.txt",
    "name with spaces.py",
    "trailing\n",
    "new\nline.py",
    "p/.hidden.py",  # never reaches the matcher; decided the same anyway
]


def wcmatch_says(glob: str, path: str) -> bool:
    regexes, _ = wcglob.translate([glob], flags=_flags())
    return re.match(regexes[0], path) is not None


@pytest.mark.parametrize("glob", PLAIN)
def test_plain_globs_decide_as_wcmatch_does(glob: str) -> None:
    plain = _plain_regex(glob)
    assert plain is not None, glob
    for path in PATHS:
        assert (re.match(plain, path) is not None) == wcmatch_says(glob, path), (glob, path)


@pytest.mark.parametrize(
    "glob", ["[ab].py", "[!a]*.txt", r"weird\[1\].txt", "src/", "a//b", "/x", "a\\*b"]
)
def test_anything_else_is_left_to_wcmatch(glob: str) -> None:
    assert _plain_regex(glob) is None


def test_whole_patterns_on_records_match_as_before() -> None:
    """GlobMatcher (braces, names at any depth, path patterns) on a block of records keeps
    exactly the records wcmatch matches, hidden ones dropped."""
    paths = [path for path in PATHS if "\n" not in path]
    block = b"".join(f"./{path}".encode() + b"\x00" for path in paths)
    others = ["src/{a,deep/**}/*.py", "**/*.{py,txt}", "{src,lib}/**", "[ab].py", "src/[!a]*.py"]
    for pattern in [*PLAIN, *others, "{*.py,src/[a]*}"]:
        alternatives = [_drop_any_depth_prefix(alt) for alt in expand_braces(pattern)]
        expected = [
            f"./{path}".encode()
            for path in paths
            if "/." not in "/" + path
            and any(
                wcmatch_says(alt, path if "/" in alt else path.rpartition("/")[2])
                for alt in alternatives
            )
        ]
        assert GlobMatcher(pattern).select_records(block) == expected, pattern


def test_a_bare_name_matches_at_any_depth() -> None:
    matcher = GlobMatcher("**/test_*.py")
    assert [path for path in PATHS if matcher.matches(path)] == [
        "test_a.py",
        "x/test_b.py",
        "src/deep/test_c.py",
        "src/test_d.py",
    ]
