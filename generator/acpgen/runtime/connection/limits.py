"""What one peer may make this process hold (``connection.Limits``).

Support code: it knows no method of the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_MESSAGE_BYTES", "Limits"]

MAX_MESSAGE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """What one peer may make this process hold."""

    max_message_bytes: int = MAX_MESSAGE_BYTES
    """The longest message read (a longer one is answered -32600 and skipped)."""
    max_depth: int = 512
    """The deepest nesting of arrays and objects read (deeper is answered -32600)."""
    max_running_requests: int = 1024
    """Peer requests handled at once; beyond it, reading pauses."""
    max_queued_notifications: int = 1024
    """Peer notifications waiting for their turn; beyond it, reading pauses."""
    max_queued_bytes: int = 64 * 1024 * 1024
    """Bytes of the waiting notifications; beyond it, reading pauses."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"Limits.{name} must be at least 1")
