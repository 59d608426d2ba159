"""The kinds of ``session/update`` the kit reasons about."""

from __future__ import annotations

TURN_CONTENT = frozenset(
    {
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
)
"""A turn's content: none may follow its answer (a mode or command update may)."""
CONVERSATION = TURN_CONTENT | {"user_message_chunk"}
"""The conversation's entries, which ``session/load`` replays before it answers; state
updates (available commands, the current mode, config options, session info, usage) may
follow the answer."""
