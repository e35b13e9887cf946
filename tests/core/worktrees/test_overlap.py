"""Where workers' changes meet, read from real worktrees: shared files, hunks likely to
conflict, the functions both changed, and what git itself then does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melgui.core.worktrees.overlap.overlaps import describe, find_overlaps, summary
from melgui.core.worktrees.overlap.touched import (
    FILES_MAX,
    Hunk,
    Touched,
    parse_diff,
    read_touched,
    touched_from_json,
    touched_to_json,
)
from tests.fakes.worktree_repos import (
    add_worker,
    change_lines,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
)

MODULE = """import os


class Parser:
    def parse(self, text):
        words = text.split()
        count = len(words)
        return words[:count]

    def render(self, words):
        return " ".join(words)


def main():
    print(Parser().parse("a b"))
"""


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _names(key: str) -> str:
    return {"a": "worker A", "b": "worker B", "c": "worker C"}[key]


def test_hunks_that_touch_conflict_and_hunks_apart_do_not(tmp_path: Path) -> None:
    one = make_repo_with_worktree(tmp_path, "a")
    two = add_worker(one.main, "b")
    three = add_worker(one.main, "c")
    change_lines(one.path / "numbers.txt", {4: "four by a", 5: "five by a"})
    run_git(one.path, "commit", "-q", "-am", "a's change")  # committed: still its change
    change_lines(two.path / "numbers.txt", {6: "six by b"})  # touches a's line 5
    change_lines(three.path / "numbers.txt", {11: "eleven by c"})  # lines apart from both
    (three.path / "fresh.txt").write_text("c's new file\n")

    touched = {key: read_touched(wt) for key, wt in (("a", one), ("b", two), ("c", three))}

    assert touched["c"].files["fresh.txt"].status == "?"
    assert touched["a"].files["numbers.txt"].hunks == (Hunk(4, 2, 4, 2),)
    overlaps = {(o.first, o.second): o for o in find_overlaps(touched)}
    assert set(overlaps) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert overlaps["a", "b"].conflict
    assert not overlaps["a", "c"].conflict and not overlaps["b", "c"].conflict
    words = describe(overlaps["a", "b"], "b", _names)
    assert words == (
        "numbers.txt, also changed by worker A: 1 hunk clash likely to conflict "
        "(your line 6 against its lines 4–5)."
    )
    assert describe(overlaps["a", "c"], "c", _names).endswith("likely to merge cleanly.")
    mine = [o for o in overlaps.values() if "a" in (o.first, o.second)]
    assert summary(mine, "a", _names) == (
        "1 file shared with worker B, worker C (1 conflict to be)"
    )

    # What git does with them bears the reading out: c merges cleanly after a, b does not.
    run_git(one.main, "merge", "-q", "--no-edit", one.branch)
    run_git(three.path, "add", "-A")
    run_git(three.path, "commit", "-q", "-m", "c")
    run_git(one.main, "merge", "-q", "--no-edit", three.branch)
    run_git(two.path, "commit", "-q", "-am", "b")
    with pytest.raises(Exception, match="returned non-zero"):
        run_git(one.main, "merge", "-q", "--no-edit", two.branch)


def test_the_same_function_changed_in_two_places_is_named(tmp_path: Path) -> None:
    one = make_repo_with_worktree(tmp_path, "a")
    (one.main / "parser.py").write_text(MODULE)
    run_git(one.main, "add", "parser.py")
    run_git(one.main, "commit", "-q", "-m", "parser")
    one = add_worker(one.main, "a2")
    two = add_worker(one.main, "b")
    text = MODULE.replace("words = text.split()", "words = text.split(',')")
    (one.path / "parser.py").write_text(text)
    text = MODULE.replace("return words[:count]", "return [w for w in words if w]")
    text = text.replace('print(Parser().parse("a b"))', 'print(Parser().parse("a  b"))')
    (two.path / "parser.py").write_text(text)

    a, b = read_touched(one), read_touched(two)

    assert a.files["parser.py"].symbols == ("Parser.parse",)
    assert b.files["parser.py"].symbols == ("Parser.parse", "main")
    (overlap,) = find_overlaps({"a": a, "b": b})
    assert not overlap.conflict  # lines 6 and 8: one unchanged line between
    assert overlap.symbols == ("Parser.parse",)
    assert describe(overlap, "a", _names) == (
        "parser.py, also changed by worker B: different lines, likely to merge cleanly; "
        "both change `Parser.parse`."
    )


def test_a_file_both_add_or_one_deletes_is_a_conflict_to_be(tmp_path: Path) -> None:
    one = make_repo_with_worktree(tmp_path, "a")
    two = add_worker(one.main, "b")
    (one.path / "new.md").write_text("a\n")
    (two.path / "new.md").write_text("b\n")
    (one.path / "notes.md").unlink()
    (two.path / "notes.md").write_text("# notes\n\nfirst\nmore by b\n")

    found = find_overlaps({"a": read_touched(one), "b": read_touched(two)})

    assert [(o.path, o.conflict) for o in found] == [("new.md", True), ("notes.md", True)]
    assert "whole file" in describe(found[1], "a", _names)


def test_different_bases_name_the_file_without_comparing_hunks(tmp_path: Path) -> None:
    one = make_repo_with_worktree(tmp_path, "a")
    change_lines(one.main / "notes.md", {3: "first, moved on"})
    run_git(one.main, "commit", "-q", "-am", "main moves on")
    two = add_worker(one.main, "b")
    change_lines(one.path / "numbers.txt", {2: "two by a"})
    change_lines(two.path / "numbers.txt", {2: "two by b"})

    (overlap,) = find_overlaps({"a": read_touched(one), "b": read_touched(two)})

    assert not overlap.compared and not overlap.conflict
    assert "different base" in describe(overlap, "a", _names)


def test_unusual_paths_and_binary_files_are_read() -> None:
    diff = (
        'diff --git "a/tab\\there.txt" "b/tab\\there.txt"\n'
        "index 1..2 100644\n"
        '--- "a/tab\\there.txt"\n'
        '+++ "b/tab\\there.txt"\n'
        "@@ -3 +3,2 @@ def run(self):\n"
        "-x\n+y\n+z\n"
        "diff --git a/img.png b/img.png\n"
        "Binary files a/img.png and b/img.png differ\n"
        "diff --git a/a b/a b b/a b/a b\n"
        "deleted file mode 100644\n"
        "--- a/a b/a b\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-gone\n"
    )
    files = {touch.path: touch for touch in parse_diff(diff)}
    assert files["tab\there.txt"].hunks == (Hunk(3, 1, 3, 2, "run"),)
    assert files["tab\there.txt"].symbols == ("run",)
    assert files["img.png"].status == "B" and files["img.png"].whole
    assert files["a b/a b"].status == "D"
    assert list(files) == ["tab\there.txt", "img.png", "a b/a b"]


def test_a_reading_sent_lists_at_most_files_max_files_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    # A worker that generated a huge tree must not make the host send an unbounded record.
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "gen").mkdir()
    for number in range(FILES_MAX + 25):
        (worktree.path / "gen" / f"f{number:05}.txt").write_text("x\n")
    change_lines(worktree.path / "numbers.txt", {3: "line 3 (worker)"})
    touched = read_touched(worktree)
    assert len(touched.files) == FILES_MAX + 26 and touched.more == 0
    sent = touched_to_json(touched)
    assert len(sent["files"]) == FILES_MAX and sent["more"] == 26
    assert sent["files"][0][0] == "numbers.txt"  # tracked changes first, with their hunks
    heard = touched_from_json(json.loads(json.dumps(sent)))
    assert (len(heard.files), heard.more, heard.count) == (FILES_MAX, 26, FILES_MAX + 26)
    assert touched_to_json(heard) == sent  # sent on as it came
    small = touched_to_json(Touched(touched.base, {"n": touched.files["numbers.txt"]}))
    assert "more" not in small  # a reading that lists every file says nothing more
    with pytest.raises(ValueError):
        touched_from_json({**sent, "more": -1})
