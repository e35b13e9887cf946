"""melgui exec compiles a dataclass's methods only when no earlier start did: the code is
kept in the user's cache, keyed by the text dataclasses writes, and the classes made
from it are the classes compiling gives. A cache that cannot be read is compiled anew."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.lean_start import CompiledOnce

ROOT = Path(__file__).resolve().parents[1]


def make_class() -> type:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 2

    return Point


def test_code_is_compiled_once_and_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "code"
    first = CompiledOnce(path)
    monkeypatch.setattr(dataclasses, "exec", first, raising=False)
    point = make_class()
    assert first.new > 0
    first.save()
    again = CompiledOnce(path)
    monkeypatch.setattr(dataclasses, "exec", again)
    same = make_class()
    assert again.new == 0 and again.used  # every method's code came from the cache
    assert same(1) == same(1, 2) and repr(same(1)).endswith("Point(x=1, y=2)")
    assert repr(same(1)) == repr(point(1)) and hash(same(3)) == hash(point(3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        same(1).x = 5


def test_a_damaged_cache_is_compiled_anew(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "code"
    path.write_bytes(CompiledOnce.HEADER + b"\x00garbage")
    cache = CompiledOnce(path)
    assert cache.known == {}
    monkeypatch.setattr(dataclasses, "exec", cache, raising=False)
    assert make_class()(1).y == 2
    cache.save()
    assert CompiledOnce(path).known.keys() == cache.known.keys()


def test_exec_keeps_the_code_for_its_next_start(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path)}
    command = [sys.executable, "-m", "melgui", "exec", "--help"]
    first = subprocess.run(command, env=env, capture_output=True, timeout=120)
    [kept] = (tmp_path / "melgui").iterdir()
    written = kept.stat().st_mtime_ns
    assert len(CompiledOnce(kept).known) > 100
    second = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert (
        (first.returncode, first.stdout) == (second.returncode, second.stdout) == (0, first.stdout)
    )
    assert kept.stat().st_mtime_ns == written  # nothing new to compile: not written again
