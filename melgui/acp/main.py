"""`melgui acp`: serve melgui as an ACP agent on stdin/stdout (for Zed, Toad, melgui).

Stdout carries the protocol only; notices go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import cast

from acp import Agent, run_agent

from melgui.acp.agent import MelguiAgent
from melgui.core.config.connection_settings import api_key_kind
from melgui.core.config.secrets import get_api_key
from melgui.core.protocol.catalog import ROLES
from melgui.headless import TRANSPORTS, UsageError, settings_for

EXIT_OK, EXIT_USAGE = 0, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melgui acp",
        description="Serve melgui's agent over the Agent Client Protocol on stdin/stdout. "
        "Each session/new works in the cwd it names; permission requests go to the client.",
        epilog="The API key comes from MELIAI_API_KEY / OPENAI_API_KEY or the system "
        "keyring, never from the command line.",
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="default: from settings")
    parser.add_argument(
        "--url",
        help="relay base URL, or for openai the base URL before /chat/completions "
        "(e.g. http://127.0.0.1:11434/v1)",
    )
    parser.add_argument("--model", help="model id (default: from settings)")
    parser.add_argument("--role", choices=ROLES, default="assistant")
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="keep no session in melgui's history (and offer no session/load)",
    )
    parser.add_argument(
        "--no-mcp", action="store_true", help="start none of the configured MCP servers"
    )
    return parser


async def serve(options: argparse.Namespace) -> None:
    settings = settings_for(options)
    api_key = get_api_key(api_key_kind(settings))
    model = settings.model or ("local" if settings.connection == "local" else "")
    agent = MelguiAgent(
        settings,
        api_key=api_key,
        model=model,
        role=options.role,
        history=not options.no_history,
        mcp=not options.no_mcp,
    )
    try:
        # The SDK routes only the methods an agent has (the rest answer "method not
        # found"); its Agent protocol lists them all, hence the cast.
        await run_agent(cast(Agent, agent))
    finally:
        await agent.aclose()


def main(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="melgui: %(message)s")
    try:
        asyncio.run(serve(options))
    except UsageError as exc:
        print(f"melgui acp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK
