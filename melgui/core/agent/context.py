"""How much of the model's window a conversation uses, and whether the next leg fits.

No tokenizer is downloaded: the estimate counts characters of what the leg sends (the
system message, the tools, every message) and divides by a characters-per-token ratio
calibrated on the `prompt_tokens` the server reported for earlier legs. A report far
below the estimate does not calibrate: it means the server cut the prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.content import ImagePart, Part
from melgui.core.protocol.context_window import UNKNOWN_WINDOW, ContextWindow, fix_for
from melgui.core.protocol.events import Usage
from melgui.core.protocol.messages import Message

DEFAULT_CHARS_PER_TOKEN = 3.6  # prose and code mixed, before any server reported usage
MESSAGE_OVERHEAD = 12  # characters a message costs beyond its text (role, separators)
PLAUSIBLE = (1.8, 5.5)  # characters per token real tokenizers give (code ~3, prose ~4.5)
TRUNCATED_BELOW = 0.5  # prompt_tokens under half the estimate: the server cut the prompt
MIN_CHECKED = 1000  # smaller prompts are too short to tell truncation from noise
IMAGE_BASE, IMAGE_TILE = 85, 170  # tokens of an image, and of each 512-pixel tile of it


def answer_reserve(window: int) -> int:
    """Tokens kept free for the model's answer."""
    return min(4096, window // 4)


@dataclass(frozen=True, slots=True)
class Fit:
    estimate: int  # tokens the next request would take
    limit: int | None  # the most it may take (window minus the answer's reserve)

    @property
    def fits(self) -> bool:
        return self.limit is None or self.estimate <= self.limit


def image_tokens(image: ImagePart) -> int:
    """An image's tokens as OpenAI's vision models count them (high detail: scaled into
    2048×2048, then its short side to 768, 170 per 512-pixel tile and 85 more); other
    servers count differently, so it is an estimate. An unread size counts as 1024×1024."""
    given = image.dimensions or (1024, 1024)
    scale = min(1.0, 2048 / max(*given, 1))
    width, height = given[0] * scale, given[1] * scale
    scale = min(1.0, 768 / max(min(width, height), 1))
    tiles = math.ceil(width * scale / 512) * math.ceil(height * scale / 512)
    return IMAGE_BASE + IMAGE_TILE * tiles


def part_chars(part: Part) -> int:
    """Characters an attachment costs: a file's text as sent; an image's tokens, at the
    uncalibrated ratio (its cost is not characters)."""
    if isinstance(part, ImagePart):
        return int(image_tokens(part) * DEFAULT_CHARS_PER_TOKEN)
    return MESSAGE_OVERHEAD + len(part.wire_text())


def message_chars(message: Message) -> int:
    """Characters one message costs on the wire (its attachments included)."""
    size = MESSAGE_OVERHEAD + len(message.content)
    for call in message.tool_calls:
        size += MESSAGE_OVERHEAD + len(call.name) + len(call.arguments) + len(call.id)
    for part in message.parts:
        size += part_chars(part)
    return size


class ContextTracker:
    """The window, the calibrated estimate, and what the server reported, per session."""

    def __init__(self) -> None:
        self.window: ContextWindow = UNKNOWN_WINDOW
        self.chars_per_token = DEFAULT_CHARS_PER_TOKEN
        self.calibrated = False
        self.last_chars = 0
        self.last_estimate = 0  # tokens of the last leg sent, estimated before it went
        self.last_prompt_tokens: int | None = None  # what the server said it read
        self.turn_usage = Usage()
        self.warning = ""  # the last truncation warning, in words
        self._tool_cache: tuple[tuple[ToolDef, ...], int] | None = None

    # -- counting ------------------------------------------------------------------------

    def tools_chars(self, tools: Sequence[ToolDef]) -> int:
        key = tuple(tools)
        if self._tool_cache is None or self._tool_cache[0] != key:
            size = sum(len(json.dumps(tool.to_openai())) for tool in key)
            self._tool_cache = (key, size)
        return self._tool_cache[1]

    def chars(self, messages: Iterable[Message], tools: Sequence[ToolDef], system: str = "") -> int:
        size = self.tools_chars(tools) + (len(system) + MESSAGE_OVERHEAD if system else 0)
        return size + sum(message_chars(message) for message in messages)

    def tokens(self, chars: int) -> int:
        return int(chars / self.chars_per_token) + 1

    def fit(self, messages: Iterable[Message], tools: Sequence[ToolDef], system: str = "") -> Fit:
        return self.fit_chars(self.chars(messages, tools, system))

    def fit_chars(self, chars: int) -> Fit:
        estimate = self.tokens(chars)
        window = self.window.tokens
        return Fit(estimate, None if window is None else window - answer_reserve(window))

    def sending(self, chars: int) -> None:
        """The leg about to go costs `chars` characters."""
        self.last_chars = chars
        self.last_estimate = self.tokens(chars)

    # -- what the server said ------------------------------------------------------------

    def _fits_llamacpp_window(self) -> bool:
        """llama.cpp says the context it runs with: a request of half that or less was
        not cut to fit it (reading less means it left something out, such as tools its
        chat template has no place for)."""
        window = self.window
        return (
            window.server == "llamacpp"
            and window.source == "server"
            and window.tokens is not None
            and self.last_estimate * 2 <= window.tokens
        )

    def reported(self, usage: Usage | None) -> str:
        """Take one leg's usage; returns a truncation warning, or "" when all is well."""
        if usage is None:
            return ""
        self.turn_usage = self.turn_usage + usage
        prompt = usage.prompt_tokens
        if prompt <= 0 or self.last_chars <= 0:
            return ""
        self.last_prompt_tokens = prompt
        ratio = self.last_chars / prompt
        # The relay builds its own prompt (window unknown): its count is not comparable;
        # nor is the embedded model's, which fits its own prompt to its window.
        checked = (
            self.window.tokens is not None
            and self.window.server != "local"
            and self.last_estimate >= MIN_CHECKED
            and not self._fits_llamacpp_window()
        )
        if checked and prompt < self.last_estimate * TRUNCATED_BELOW:
            self.warning = truncation_warning(prompt, self.last_estimate, self.window)
            return self.warning
        if PLAUSIBLE[0] <= ratio <= PLAUSIBLE[1]:
            # Weighted towards recent legs: the mix of prose and code changes over a session.
            weight = 1.0 if not self.calibrated else 0.5
            self.chars_per_token += (ratio - self.chars_per_token) * weight
            self.calibrated = True
        return ""

    def new_turn(self) -> None:
        self.turn_usage = Usage()


def truncation_warning(prompt_tokens: int, estimate: int, window: ContextWindow) -> str:
    """Plain words for a server that read much less than it was sent."""
    kept = 100 * prompt_tokens // max(estimate, 1)
    return (
        f"The server read only {prompt_tokens:,} tokens of a request of about {estimate:,} "
        f"(about {kept}%): it cut the prompt to fit its context window, so the model may "
        f"not have seen the instructions, the tools or your request. {fix_for(window.server)}"
    )


def overflow_warning(estimate: int, window: ContextWindow) -> str:
    return (
        f"The next request (about {estimate:,} tokens) is larger than the model's window "
        f"of {window.label} tokens even after compaction. {fix_for(window.server)}"
    )
