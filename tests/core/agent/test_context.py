"""The context estimate: calibrated on reported usage, never on a cut prompt; usage keeps
cached tokens and cost; the window's label says where it came from."""

from __future__ import annotations

from melgui.core.agent.context import DEFAULT_CHARS_PER_TOKEN, ContextTracker, answer_reserve
from melgui.core.protocol.context_window import ContextWindow
from melgui.core.protocol.events import Usage
from melgui.core.protocol.messages import Message


def test_calibration_follows_the_servers_counts() -> None:
    tracker = ContextTracker()
    tracker.window = ContextWindow(32_000, "server")
    messages = [Message.user("x" * 9_000)]
    chars = tracker.chars(messages, ())
    assert tracker.fit(messages, ()).estimate == int(chars / DEFAULT_CHARS_PER_TOKEN) + 1
    tracker.sending(chars)
    assert tracker.reported(Usage(prompt_tokens=chars // 3)) == ""
    assert tracker.calibrated and abs(tracker.chars_per_token - 3.0) < 0.01
    assert tracker.fit(messages, ()).estimate == int(chars / tracker.chars_per_token) + 1


def test_a_cut_prompt_warns_and_does_not_calibrate() -> None:
    tracker = ContextTracker()
    tracker.window = ContextWindow(4096, "guess", server="lmstudio")
    tracker.sending(40_000)
    warning = tracker.reported(Usage(prompt_tokens=2_000))
    assert "read only 2,000 tokens" in warning and "Context Length" in warning
    assert not tracker.calibrated and tracker.chars_per_token == DEFAULT_CHARS_PER_TOKEN


def test_the_local_models_own_shorter_prompt_is_not_a_cut() -> None:
    """The embedded model builds its own prompt (a small model answers a result in a
    plain chat without the tools), fitted to its window; it reads less than was sent."""
    tracker = ContextTracker()
    tracker.window = ContextWindow(4096, "server", "the embedded model's context", "local")
    tracker.sending(4_000)
    assert tracker.reported(Usage(prompt_tokens=114)) == ""


def test_the_relay_count_is_not_compared() -> None:
    tracker = ContextTracker()  # window unknown
    tracker.sending(40_000)
    assert tracker.reported(Usage(prompt_tokens=10)) == ""


def test_fit_keeps_room_for_the_answer() -> None:
    tracker = ContextTracker()
    tracker.window = ContextWindow(8192, "server")
    assert answer_reserve(8192) == 2048
    fit = tracker.fit_chars(int((8192 - 2048) * DEFAULT_CHARS_PER_TOKEN))
    assert fit.limit == 8192 - 2048 and fit.fits
    assert not tracker.fit_chars(int(8192 * DEFAULT_CHARS_PER_TOKEN)).fits
    assert ContextTracker().fit_chars(10**9).fits  # unknown window: nothing to check


def test_usage_keeps_cached_tokens_and_cost() -> None:
    usage = Usage.from_wire(
        {
            "prompt_tokens": 100,
            "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 80},
            "cost": 0.0025,
        }
    )
    assert usage is not None
    total = usage + usage
    assert (total.cached_tokens, total.cost, total.total_tokens) == (160, 0.005, 220)
    assert usage.to_json() == {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "cached_tokens": 80,
        "cost": 0.0025,
    }
    plain = Usage.from_wire({"prompt_tokens": 1})
    assert plain is not None and plain.to_json() == {
        "prompt_tokens": 1,
        "completion_tokens": 0,
        "total_tokens": 1,
    }
    assert (plain + usage).cost == 0.0025 and (plain + plain).cost is None


def test_window_labels() -> None:
    assert ContextWindow(8192, "guess").label == "8,192 (a guess)"
    assert ContextWindow(20000, "setting").label == "20,000 (your setting)"
    assert ContextWindow(None, "unknown").label == "unknown"


def test_llama_cpp_reading_less_of_a_prompt_well_inside_its_window_is_no_cut() -> None:
    """llama.cpp's /props says the context it runs with: a prompt of half that or less was
    not cut to fit (a template with no place for tools reads less than was sent)."""
    tracker = ContextTracker()
    tracker.window = ContextWindow(4096, "server", server="llamacpp")
    tracker.sending(int(1_056 * DEFAULT_CHARS_PER_TOKEN))
    assert tracker.reported(Usage(prompt_tokens=155)) == ""
    tracker = ContextTracker()
    tracker.window = ContextWindow(4096, "server", server="llamacpp")
    tracker.sending(int(3_000 * DEFAULT_CHARS_PER_TOKEN))
    assert "read only 155 tokens" in tracker.reported(Usage(prompt_tokens=155))
