"""The connection and session ids in every log record of the runtime.

Support code: it knows no method of the protocol. Every runtime module logs through
:func:`logger` (the standard ``logging`` module's logger of its name, with
:class:`Ids` as a filter), so that each record carries two attributes a format can
name, ``%(acp_connection)s`` and ``%(acp_session)s`` (``-`` where there is none):

- the connection: the connection whose handler, reading or writing logs (the
  ``connection.Connection``'s :attr:`~.connection.Connection.id`, where
  ``in_flight.CURRENT`` names it), else what :data:`CONNECTION` holds (the remote app
  and the relay set it to the ``Acp-Connection-Id`` for what they do for a connection);
- the session: the ``sessionId`` of the peer message being handled (a notification, or
  the request whose handler's task logs), else what :data:`SESSION` holds.

Nothing is looked up until a record is made: logging costs nothing more where nothing
is logged.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from ..wire.messages import session_of
from .in_flight import CURRENT, Notification

__all__ = ["CONNECTION", "SESSION", "Ids", "logger"]

CONNECTION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "acp_connection_id", default=None
)
"""The connection a task works for, where no handled message says it."""
SESSION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "acp_session_id", default=None
)
"""The session a task works for, where no handled message says it."""


class Ids(logging.Filter):
    """Adds ``acp_connection`` and ``acp_session`` to each record (refuses none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        work = CURRENT.get()
        connection = getattr(getattr(work, "connection", None), "id", None)
        session = _session(work)
        record.acp_connection = connection or CONNECTION.get() or "-"
        record.acp_session = session or SESSION.get() or "-"
        return True


_IDS = Ids()


def logger(name: str) -> logging.Logger:
    """The standard logger ``name``, with :class:`Ids` as a filter (once)."""
    log = logging.getLogger(name)
    if _IDS not in log.filters:
        log.addFilter(_IDS)
    return log


def _session(work: Any) -> str | None:
    """The session of the message being handled in this task, if it names one."""
    if isinstance(work, Notification):
        return session_of(work.message)
    running = getattr(getattr(work, "connection", None), "running_messages", None)
    if running is None:
        return None
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no loop runs
        return None
    for incoming in list(running()):
        if incoming.task is task:
            return session_of(incoming.message)
    return None
