"""A client application that traces its turn, for the telemetry tests: run it under
``tests.support.otel_run`` (which sets OpenTelemetry's providers up, as an application does).

    python -m tests.support.telemetry_client --spawn -- AGENT COMMAND...
    python -m tests.support.telemetry_client --url URL --transport ws|http [--scrape URL --scraped FILE]

In one span of its own (``turn``): initialize, a session, two prompts, then ``_nope``, which the
agent does not handle (-32601), and a ``session/cancel`` notification. With ``--scrape``, while
the connection is still open it fetches the metrics page at that URL (a relay's Prometheus
endpoint) into ``--scraped``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from acp_bindings import PROTOCOL_VERSION, Client, builders, models, spawn_agent
from acp_bindings.errors import RequestError
from opentelemetry import trace

WORDS = ("one", "two", "three")


class Collecting(Client):
    def __init__(self) -> None:
        self.chunks = 0

    async def session_update(self, params: models.SessionNotification) -> None:
        self.chunks += 1

    async def request_permission(self, params: models.RequestPermissionRequest) -> models.RequestPermissionResponse:
        return builders.request_permission_response(builders.cancelled_request_permission_outcome())


async def turn(agent: object, client: Collecting, options: argparse.Namespace) -> None:
    await agent.initialize(builders.initialize_request(PROTOCOL_VERSION))  # type: ignore[attr-defined]
    session = await agent.new_session(builders.new_session_request(os.getcwd(), []))  # type: ignore[attr-defined]
    for words in (WORDS, WORDS[:2]):
        prompt = [builders.text_content_block(" ".join(words))]
        await agent.prompt(builders.prompt_request(session.session_id, prompt))  # type: ignore[attr-defined]
    try:
        await agent.ext_method("_nope", {})  # type: ignore[attr-defined]
    except RequestError as error:
        print(f"_nope: {error.code}")
    await agent.cancel(builders.cancel_notification(session.session_id))  # type: ignore[attr-defined]
    if options.scrape:
        import httpx

        async with httpx.AsyncClient() as http:
            page = await http.get(options.scrape)
        Path(options.scraped).write_text(page.text, encoding="utf-8")
    print(f"chunks: {client.chunks}")


async def main(options: argparse.Namespace) -> None:
    client = Collecting()
    tracer = trace.get_tracer("telemetry_client")
    with tracer.start_as_current_span("turn"):
        if options.url:
            from acp_bindings.remote import connect_agent

            async with connect_agent(options.url, client, transport=options.transport) as agent:
                await turn(agent, client, options)
        else:
            async with spawn_agent(options.command, client) as agent:
                await turn(agent, client, options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--transport", default="ws")
    parser.add_argument("--spawn", action="store_true")
    parser.add_argument("--scrape")
    parser.add_argument("--scraped")
    parser.add_argument("command", nargs="*")
    asyncio.run(main(parser.parse_args(sys.argv[1:])))
