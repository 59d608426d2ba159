"""The connection and session ids in every log record of the runtime (issue 46, item 1; ``log_ids``):
records of the runtime's loggers carry ``acp_connection`` and ``acp_session``, so that a format can name
them; ``-`` where there is none. Two connections over a real socket pair, in one process."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from acpgen.runtime.connection.connection import Connection
from acpgen.runtime.connection.lines import LineTransport
from acpgen.runtime.connection.log_ids import CONNECTION, SESSION
from acpgen.runtime.wire.rpc import RequestError


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def _failing(calling: Connection, params: Any) -> None:
    try:
        await calling.request("fail", params)
    except RequestError as error:
        assert error.code == -32603
    else:
        raise AssertionError("answered")


def test_records_of_a_handler_that_failed_name_its_connection_and_session() -> None:
    async def agent(message: dict[str, Any]) -> dict[str, Any] | None:
        raise ValueError("boom")  # logged by the runtime with its traceback, -32603 to the peer

    async def client(message: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def scenario() -> tuple[str, list[logging.LogRecord]]:
        left, right = socket.socketpair()
        a_reader, a_writer = await asyncio.open_connection(sock=left)
        b_reader, b_writer = await asyncio.open_connection(sock=right)
        served = Connection(LineTransport(a_reader, a_writer), agent)
        calling = Connection(LineTransport(b_reader, b_writer), client)
        served.start()
        calling.start()
        try:
            for params in ({"sessionId": "s-1"}, {"sessionId": 5}, None):
                await _failing(calling, params)
            await calling.notify("noted", {"sessionId": "s-2"})
            await _failing(calling, {})  # answered after the notification was handled
            CONNECTION.set("remote-7")  # where no handled message says it: what the task works for
            SESSION.set("s-3")
            logging.getLogger("acpgen.runtime.connection.dispatch").warning("outside any handler")
        finally:
            await calling.close()
            await served.close()
        return served.id, handler.records

    handler = _Records()
    log = logging.getLogger("acpgen.runtime.connection.dispatch")
    log.addHandler(handler)
    try:
        served_id, records = asyncio.run(asyncio.wait_for(scenario(), 10))
    finally:
        log.removeHandler(handler)
    ids = [(r.getMessage(), r.acp_connection, r.acp_session) for r in records]  # type: ignore[attr-defined]
    assert ids == [
        ("handler of 'fail' failed", served_id, "s-1"),
        ("handler of 'fail' failed", served_id, "-"),  # not a string: no session
        ("handler of 'fail' failed", served_id, "-"),
        ("handler of notification 'noted' failed", served_id, "s-2"),
        ("handler of 'fail' failed", served_id, "-"),
        ("outside any handler", "remote-7", "s-3"),
    ]
    assert served_id.count(".") == 1  # a stdio connection: this process's pid and a number
