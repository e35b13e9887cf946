"""Review of a diff: the model's findings land on the right hunks, the review runs with
read-only tools, and a project's own review prompt is used."""

from __future__ import annotations

import subprocess
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL
from melgui.core.protocol.catalog import READ_ONLY_TOOLS
from melgui.core.protocol.tools.pins import PIN_FACT
from melgui.desk.desk import Desk
from melgui.desk.review import findings_of, review, target_args
from tests.fakes import ScriptedRelay, done, text

BEFORE = "".join(f"line {n}\n" for n in range(1, 41))


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def repository(folder: Path) -> None:
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.email", "t@example.com")
    git(folder, "config", "user.name", "T")
    (folder / "app.py").write_text(BEFORE)
    (folder / "util.py").write_text("def f():\n    return 1\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")


async def test_a_reviews_comments_land_on_the_right_hunks(tmp_path: Path) -> None:
    project = tmp_path / "p"
    repository(project)
    lines = BEFORE.splitlines(keepends=True)
    lines[2] = "line 3 changed\n"  # first hunk: around line 3
    lines[30] = "line 31 changed\n"  # second hunk: around line 31
    (project / "app.py").write_text("".join(lines))
    (project / "util.py").write_text("def f():\n    return None\n")
    (project / ".melgui").mkdir()
    (project / ".melgui" / "review.md").write_text("Review for our house style.")
    answer = (
        "Findings:\n"
        "app.py:31: error: the changed line drops the counter\n"
        "- `app.py:3`: warning: say why line 3 changed\n"
        "util.py:2: note: None where callers expect an int\n"
        "other.py:9: error: not in this diff\n"
        "That is all."
    )
    with ScriptedRelay() as relay:
        relay.script([text(answer), done()])
        desk = Desk(str(project), Settings(connection="relay", relay_url=relay.base_url),
                    api_key="k", plans=lambda t, m: None)  # fmt: skip
        session = desk.session(model="relay-model", role="assistant")
        comments = await review(session, desk.folder)
        await session.aclose()
        await desk.aclose()
    placed = [(c.finding.path, c.hunk, c.finding.severity, c.header) for c in comments]
    assert placed == [
        ("app.py", 1, "error", "@@ -28,7 +28,7 @@ line 27"),
        ("app.py", 0, "warning", "@@ -1,6 +1,6 @@"),
        ("util.py", 0, "note", "@@ -1,2 +1,2 @@"),
    ]
    (leg,) = relay.legs_received
    # read-only, and pin_fact (it writes only the conversation)
    assert set(leg.tool_names) <= READ_ONLY_TOOLS | {DIAGNOSTICS_TOOL.name, PIN_FACT.name}
    assert leg.last_user_text.startswith("Review for our house style.")
    assert "+line 31 changed" in leg.last_user_text
    assert not session.loop.plan.on  # the mode it had before the review


def test_targets_and_the_finding_format() -> None:
    assert target_args("") == ["diff", "HEAD"]
    assert target_args("last 3") == ["diff", "HEAD~3", "HEAD"]
    assert target_args("melgui/worker-2") == ["diff", "HEAD...melgui/worker-2"]
    assert [f.line for f in findings_of("a.py:7: note: x\nnot a finding: 3\n")] == [7]
