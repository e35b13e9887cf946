"""One hook process: how it starts, what of its output is kept, and that it ends when
it exits even when something it started holds its pipes open."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from melgui.core.hooks.config import HookCommand
from melgui.core.hooks.runner import OUTPUT_CAP, hook_env, run_hook


def command(text: str, timeout: float = 30.0) -> HookCommand:
    return HookCommand("PreToolUse", text, timeout, "", "test")


async def test_a_hook_starts_in_its_own_group_with_default_signals_and_a_small_environment(
    tmp_path: Path,
) -> None:
    probe = (  # the shell running the hook leads its session and group
        "import os; print(os.getppid() == os.getsid(0) == os.getpgid(0), "
        "sorted(os.environ), os.getcwd(), input(), sep='|')"
    )
    env = hook_env(str(tmp_path), {"PATH": os.environ["PATH"], "OPENAI_API_KEY": "secret"})
    shell = f"grep -E '^Sig(Ign|Blk)' /proc/self/status; {sys.executable} -c \"{probe}\""
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignored here, default in the hook
    try:
        ran = await run_hook(command(shell), b"payload\n", cwd=str(tmp_path), env=env)
    finally:
        signal.signal(signal.SIGINT, old)
    assert ran.exit_code == 0, ran.stderr
    blocked, ignored, probed = ran.stdout.split("\n", 2)
    assert blocked.split() == ["SigBlk:", "0" * 16] and ignored.startswith("SigIgn:")
    # 32 and 33 are the C library's own, which no program can set; the rest are default
    assert not int(ignored.split()[1], 16) & sum(1 << (n - 1) for n in signal.valid_signals())
    own, names, cwd, stdin = probed.split("|")
    assert own == "True" and "OPENAI_API_KEY" not in names and "'CLAUDE_PROJECT_DIR'" in names
    assert cwd == str(tmp_path) and stdin.strip() == "payload"


async def test_output_beyond_what_a_pipe_holds_is_read_and_kept_up_to_the_cap(
    tmp_path: Path,
) -> None:
    noisy = "head -c 300000 /dev/zero | tr '\\0' a; head -c 200000 /dev/zero | tr '\\0' b >&2"
    ran = await run_hook(command(f"{noisy}; echo end"), b"{}", cwd=str(tmp_path),
                         env=hook_env(str(tmp_path)))  # fmt: skip
    assert ran.exit_code == 0 and not ran.timed_out
    assert ran.stdout.startswith("a" * 1000) and ran.stdout.endswith("[… cut]")
    assert len(ran.stdout) == OUTPUT_CAP + len("\n[… cut]")
    assert set(ran.stderr[:OUTPUT_CAP]) == {"b"}


async def test_a_hook_is_done_when_it_exits_though_an_escaped_child_holds_its_output(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "escaped.pid"
    escaped = (  # it answers once the child has left its session, holding its stdout
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' & "
        f"while [ ! -s {pid_file} ]; do :; done; echo answered"
    )
    ran = await run_hook(command(escaped, timeout=30), b"{}", cwd=str(tmp_path),
                         env=hook_env(str(tmp_path)))  # fmt: skip
    try:
        assert ran.exit_code == 0 and not ran.timed_out and ran.stdout == "answered\n"
    finally:
        if pid_file.exists() and pid_file.read_text().strip():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
