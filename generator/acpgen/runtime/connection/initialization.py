"""Protocol version negotiation at ``initialize``.

Support code: it knows no method of the protocol, nor the version a package speaks: the
generated ``initialization`` module gives it (``SUPPORTED_VERSIONS``, from the schema).

The client sends the latest version it supports; the agent answers with that version if
it supports it, else with the latest version it supports; the client then checks that it
supports the answer (and should close the connection if it does not).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "UnsupportedVersionError",
    "accepts_version",
    "negotiate_version",
    "require_version",
]


def negotiate_version(requested: int, supported: Sequence[int]) -> int:
    """Agent side: the version to answer a client that requested ``requested``."""
    if not supported:
        raise ValueError("no supported protocol version")
    return requested if requested in supported else max(supported)


def accepts_version(answered: int, supported: Sequence[int]) -> bool:
    """Client side: whether the version the agent answered is one the client
    supports."""
    return answered in supported


class UnsupportedVersionError(Exception):
    """The agent answered ``initialize`` with a protocol version the client does not
    speak."""

    def __init__(self, answered: int, supported: Sequence[int]) -> None:
        super().__init__(
            f"the agent answered protocol version {answered}, but these bindings speak "
            f"{', '.join(map(str, supported))}: close the connection "
            f"(or use bindings for version {answered})"
        )
        self.answered = answered
        self.supported = tuple(supported)


def require_version(answered: int, supported: Sequence[int]) -> None:
    """Client side: raise :class:`UnsupportedVersionError` unless the client speaks
    ``answered``."""
    if not accepts_version(answered, supported):
        raise UnsupportedVersionError(answered, supported)
