"""The remote twin of ``echo_client.py``: it connects to an agent served over the network,
sends it one prompt and prints what it streamed.

    python examples/remote_client.py --url http://127.0.0.1:8000/acp [--transport ws|http] [--reconnect] WORDS...

``remote_agent.py`` serves the echo agent there. It uses only the generated bindings (and
their ``remote`` extra: httpx with h2, websockets). With ``--reconnect`` a lost connection is
opened again and the session resumed where it was (the agent must be served with ``resume``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the echo example beside this file

from acp_bindings import builders, connect_agent, run
from acp_bindings.resume import Reconnect
from echo_client import INITIALIZE, PrintingClient


async def main(url: str, transport: Literal["ws", "http"], text: str, *, reconnect: bool = False) -> str:
    client = PrintingClient()
    policy = Reconnect() if reconnect else None
    async with connect_agent(url, client, transport=transport, reconnect=policy) as agent:
        await agent.initialize(INITIALIZE)
        session = await agent.new_session(builders.new_session_request(os.getcwd(), []))
        prompt = [builders.text_content_block(text)]
        result = await agent.prompt(builders.prompt_request(session.session_id, prompt))
    # prompt() returns once every update of the turn was handled: the chunks are all here
    return f"{''.join(client.chunks).strip()}\n({result.stop_reason})"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", required=True, help="the agent's endpoint, e.g. http://127.0.0.1:8000/acp")
    parser.add_argument("--transport", choices=("ws", "http"), default="ws", help="WebSocket or Streamable HTTP")
    parser.add_argument("--reconnect", action="store_true", help="reconnect and resume after a lost connection")
    parser.add_argument("words", nargs="*", default=["hello", "from", "the", "client"])
    args = parser.parse_args()
    try:
        print(run(main(args.url, args.transport, " ".join(args.words), reconnect=args.reconnect)))
    except ConnectionError as error:  # the agent could not be reached, or went away mid-turn
        sys.exit(f"remote_client: {args.url}: {error}")
