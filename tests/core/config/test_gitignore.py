"""`.gitignore` rules as git reads them (pathspec), one file at a time."""

from __future__ import annotations

import pytest

from melgui.core.config.gitignore import IgnoreFile

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


def test_unreadable_gitignore_lines_are_skipped_and_the_rest_applies() -> None:
    rules = IgnoreFile.parse("!\nfoo\\\n*.log\n")
    assert rules.verdict("a.log", False) is True
    assert rules.verdict("foo", False) is None
    assert not rules.empty
    assert IgnoreFile.parse("# only a comment\n\n").empty
