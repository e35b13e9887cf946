"""A server's request for input: the form's fields read from the schema the SDK's server
sends, the person's accept / decline / cancel reaching the tool, the request tied to the
call it came during, and without a form: a decline, or the defaults."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.protocol.tooling import RUNNING_CALL, ToolOutcome
from melgui.tools.mcp.asks.elicitation import InputRequest
from melgui.tools.mcp.asks.input_answers import InputPolicy
from melgui.tools.mcp.manager import McpManager
from tests.fakes.mcp import fake_stdio, running


async def asked(requests: list[InputRequest]) -> InputRequest:
    for _ in range(500):
        if requests:
            return requests[-1]
        await asyncio.sleep(0.02)
    raise AssertionError("the server never asked for input")


def book(manager: McpManager) -> asyncio.Future[ToolOutcome]:
    """mcp__fake__book as the loop runs it: for call b1 of the assistant."""

    async def run() -> ToolOutcome:
        RUNNING_CALL.set(("assistant", "b1", "mcp__fake__book"))
        return await manager.bridge.registry.run("mcp__fake__book", {})

    return asyncio.ensure_future(run())


async def test_the_form_has_the_schemas_fields_and_an_accept_reaches_the_tool(
    tmp_path: Path,
) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        requests: list[InputRequest] = []
        manager.servers["fake"].ask_input = requests.append
        call = book(manager)
        request = await asked(requests)
        assert request.server == "fake"
        assert request.message == "Book a table at Chez Nous: who, how many, where?"
        assert request.call is not None
        assert (request.call.source, request.call.call_id) == ("assistant", "b1")
        assert request.call.tool == "mcp__fake__book"
        fields = {f.name: f for f in request.fields}
        assert [f.name for f in request.fields] == ["guest", "party", "budget", "outside", "course"]
        assert (fields["guest"].kind, fields["guest"].required) == ("string", True)
        assert fields["guest"].description == "Who the table is for"
        party = fields["party"]
        assert (party.kind, party.default, party.minimum, party.maximum) == ("integer", 2, 1, 12)
        assert (fields["budget"].kind, fields["budget"].default) == ("number", 40.5)
        assert (fields["outside"].kind, fields["outside"].title) == ("boolean", "Sit outside")
        assert fields["course"].kind == "choice"
        assert [v for v, _ in fields["course"].options] == ["starter", "main", "dessert"]
        # Answers that do not fit are refused in words, and the request stays open.
        assert request.accept({"party": 3}) == "Guest is required."
        assert request.accept({"guest": "Ada", "party": 20}) == "Party must be at most 12."
        assert request.accept({"guest": "Ada", "party": "two"}) == "Party must be a whole number."
        assert request.pending
        values = {"guest": "Ada", "party": "4", "budget": 30, "outside": True, "course": "dessert"}
        assert request.accept(values) == ""
        outcome = await call
        assert outcome.status == "ok"
        assert outcome.content == (
            'accepted {"guest":"Ada","party":4,"budget":30.0,"outside":true,"course":"dessert"}'
        )


async def test_decline_and_cancel_reach_the_tool(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        requests: list[InputRequest] = []
        manager.servers["fake"].ask_input = requests.append
        call = book(manager)
        (await asked(requests)).decline()
        assert (await call).content == "decline"
        requests.clear()
        call = book(manager)
        (await asked(requests)).cancel()
        assert (await call).content == "cancel"


async def test_stopping_the_call_withdraws_its_form(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        requests: list[InputRequest] = []
        manager.servers["fake"].ask_input = requests.append
        call = book(manager)
        request = await asked(requests)
        call.cancel()
        for _ in range(250):
            if not request.pending:
                break
            await asyncio.sleep(0.02)
        assert request.answer.result() == ("cancel", None)
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "still"})
        assert echo.content == "still"


async def test_without_a_form_input_is_declined_or_given_the_defaults(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        outcome = await manager.bridge.registry.run("mcp__fake__book", {})
        assert outcome.content == "decline"
        manager.servers["fake"].input_policy = InputPolicy(forms="defaults")
        outcome = await manager.bridge.registry.run("mcp__fake__book", {})
        # An accept with the defaults, which lack the required guest: the server's own
        # validation turns it down (a decline would have answered "decline").
        assert (outcome.status, outcome.content) == ("error", "Error executing tool book")


def pay(manager: McpManager, url: str = "") -> asyncio.Future[ToolOutcome]:
    async def run() -> ToolOutcome:
        RUNNING_CALL.set(("assistant", "p1", "mcp__fake__pay"))
        return await manager.bridge.registry.run("mcp__fake__pay", {"url": url} if url else {})

    return asyncio.ensure_future(run())


async def test_an_address_opens_only_when_the_person_says_so(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        opened: list[str] = []
        server = manager.servers["fake"]
        server.input_policy = InputPolicy(browser=lambda url: opened.append(url) or True)
        requests: list[InputRequest] = []
        server.ask_input = requests.append
        call = pay(manager)
        request = await asked(requests)
        assert (request.url, request.host) == (
            "https://pay.example/checkout?table=7",
            "pay.example",
        )
        assert request.message == "Pay the deposit for table 7."
        assert request.fields == () and request.call is not None
        assert opened == []  # shown, not opened
        request.decline()
        assert (await call).content == "decline"
        assert opened == []
        requests.clear()
        call = pay(manager)
        (await asked(requests)).accept({})
        assert (await call).content == "accept"
        assert opened == ["https://pay.example/checkout?table=7"]
        assert any("finished pay-7" in line for line in server.stderr.tail(5))


async def test_an_address_that_is_not_a_web_page_is_never_offered(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        requests: list[InputRequest] = []
        manager.servers["fake"].ask_input = requests.append
        outcome = await pay(manager, "file:///etc/passwd")
        assert outcome.content == "decline" and requests == []
        outcome = await pay(manager, "https://user:secret@pay.example/")
        assert outcome.content == "decline" and requests == []


async def test_without_the_person_an_address_is_declined_in_words_unless_allowed(
    tmp_path: Path,
) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        said: list[str] = []
        opened: list[str] = []
        server = manager.servers["fake"]
        server.say = said.append
        server.input_policy = InputPolicy(browser=lambda url: opened.append(url) or True)
        assert (await pay(manager)).content == "decline"
        assert opened == []
        assert said == [
            "MCP server fake asks you to open https://pay.example/checkout?table=7: Pay the "
            "deposit for table 7. — declined; run with --mcp-open-urls to open such addresses"
        ]
        said.clear()
        server.input_policy = InputPolicy(
            open_urls=True, browser=lambda url: opened.append(url) or True
        )
        assert (await pay(manager, "http://xn--pypal-4ve.example/")).content == "accept"
        assert opened == ["http://xn--pypal-4ve.example/"]
        assert "careful: its host is written in an international alphabet" in said[0]
