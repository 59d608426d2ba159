"""Template data for the package's front door (``__init__.py``): what it offers, from which
module, decided from what the package holds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Export:
    """A name the package offers: a module of its own, or an attribute of one."""

    name: str
    module: str
    """The module, relative to the package (``.interfaces``)."""
    attribute: str | None = None
    """The attribute of the module, or None for the module itself."""


def front_door(*, connected: bool, remote: bool, session_state: bool) -> tuple[Export, ...]:
    """What ``from <package> import ...`` offers: the models and builders, the error a handler
    raises, version negotiation and, where the schema has both roles, the interfaces and the
    helpers that connect them (over stdio, and over the network where the package can serve it),
    and the session state where the schema has session updates. Sorted by name."""
    found = [
        Export("models", ".models"),
        Export("builders", ".builders"),
        Export("RequestError", ".errors", "RequestError"),
        Export("negotiate_version", ".initialization", "negotiate_version"),
    ]
    if connected:
        found += [Export(name, ".interfaces", name) for name in ("Agent", "Client")]
        found += [Export(name, ".serve", name) for name in ("run", "run_agent", "spawn_agent")]
    if connected and remote:
        found += [Export(name, ".remote", name) for name in ("asgi_app", "connect_agent")]
    if session_state:
        found.append(Export("SessionState", ".session_state", "SessionState"))
    return tuple(sorted(found, key=lambda e: e.name))
