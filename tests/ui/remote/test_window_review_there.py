"""A remote folder's review asks with the project's own review prompt as it is there: its
`.melgui/review.md` is read in the folder there, by the host there, not from a path of
the same name on this machine (over the real sshd)."""

from __future__ import annotations

import asyncio
import os
import shlex
from typing import Any

import pytest

from melgui.remote.connect import HOST_COMMAND_ENV
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote, url

THERE = "Review as the folder there asks: name the ticket."
HERE = "Review as the copy on this machine says."


def test_a_remote_folders_review_reads_its_review_prompt_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The folder there is `real` as melgui's host there sees it at `shown`'s path (a bind
    # mount around that host): this machine's `shown` holds another review.md.
    real = remote.folder("review-real", {"a.txt": "first\n"})
    (real / ".melgui").mkdir()
    (real / ".melgui" / "review.md").write_text(THERE)
    mine = ("-c", "safe.directory=*")
    git(real, *mine, "init", "-q")
    git(real, *mine, "add", "a.txt")
    git(real, *mine, "commit", "-q", "-m", "start")
    (real / "a.txt").write_text("first\nsecond there\n")
    remote.server.give(real)
    shown = remote.folder("review-shown")
    (shown / ".melgui").mkdir()
    (shown / ".melgui" / "review.md").write_text(HERE)
    remote.server.give(shown)
    runtime = remote.folder("review-runtime")  # a host of this test's own, in the mount
    os.chmod(runtime, 0o700)
    environment, *host = remote.host_argv
    assert environment == "env"
    argv = ["bwrap", "--dev-bind", "/", "/", "--bind", str(real), str(shown), "--",
            "env", "-u", "XDG_RUNTIME_DIR", f"TMPDIR={runtime}", *host]  # fmt: skip
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(argv))
    scripted_relay.script([text("a.txt:2: note: name the ticket"), done()])
    window = remote_window(url(remote, shown), relay_settings(scripted_relay))

    async def scenario() -> None:
        await wait_until(lambda: window.reviews.session is not None, 30)
        window.reviews.start("")
        await wait_until(lambda: bool(scripted_relay.legs_received), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    (leg,) = scripted_relay.legs_received
    assert leg.last_user_text.startswith(THERE)
    assert "+second there" in leg.last_user_text  # the change there, read there
