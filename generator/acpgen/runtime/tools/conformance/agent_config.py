"""Agent config options (where a session answer offers them): each current value is
valid for its option, and ``session/set_config_option`` answers with every option."""

from __future__ import annotations

from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, error_code, result_of

ORDER = 41
METHODS = ("session/set_config_option",)
CHECKS = (
    CheckSpec(
        "agent.config",
        ("agent",),
        judges=("ACP-AGENT-CONFIG-001", "ACP-AGENT-CONFIG-002"),
        handlers=("session/set_config_option",),
    ),
)


def config_options(s: Scenario) -> None:
    s.handshake()
    answer = s.driver.need("session/new", s.new_session_params())
    result = result_of(answer) or {}
    session, options = result.get("sessionId"), result.get("configOptions")
    if not isinstance(session, str) or not isinstance(options, list) or not options:
        return  # none offered: their requirements do not apply
    s.run.handed_out.add("SessionConfigId")
    bad = [why for o in options if isinstance(o, dict) and (why := _invalid(o))]
    s.check(
        "ACP-AGENT-CONFIG-001",
        not bad,
        "; ".join(bad),
        f"{len(options)} options, each with a valid current value",
    )
    option = next(
        (
            o
            for o in options
            if isinstance(o, dict) and o.get("type") in ("select", "boolean")
        ),
        None,
    )
    if option is not None:
        _set(s, session, options, option)


def _choices(option: dict[str, Any]) -> list[Any]:
    """The values a select option offers (its groups flattened)."""
    found: list[Any] = []
    for item in option.get("options") or []:
        if isinstance(item, dict) and "group" in item:
            found += [
                o.get("value") for o in item.get("options") or [] if isinstance(o, dict)
            ]
        elif isinstance(item, dict):
            found.append(item.get("value"))
    return found


def _invalid(option: dict[str, Any]) -> str:
    kind, value = option.get("type"), option.get("currentValue")
    if kind == "select" and value not in _choices(option):
        return f"{option.get('id')!r}: {value!r} is not one of {_choices(option)!r}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"{option.get('id')!r}: {value!r} is not a boolean"
    return ""


def _set(s: Scenario, session: str, options: list[Any], option: dict[str, Any]) -> None:
    params: dict[str, Any] = {"sessionId": session, "configId": option.get("id")}
    if option.get("type") == "boolean":
        wanted: Any = not option.get("currentValue")
        params.update(type="boolean", value=wanted)
    else:
        choices = _choices(option)
        current = option.get("currentValue")
        wanted = next((c for c in choices if c != current), current)
        params["value"] = wanted
    handler = s.kit.derived("required-handler", "session/set_config_option")
    s.step("ACP-AGENT-CONFIG-002", handler)
    answer = s.driver.request("session/set_config_option", params)
    s.check(
        s.kit.derived("required-handler", "session/set_config_option"),
        answer is not None and error_code(answer) != -32601,
        f"session/set_config_option: {describe(answer)}",
        "session/set_config_option answered",
    )
    after = (result_of(answer) or {}).get("configOptions")
    if not isinstance(after, list):
        s.fail("ACP-AGENT-CONFIG-002", f"session/set_config_option: {describe(answer)}")
        return
    now = {o.get("id"): o.get("currentValue") for o in after if isinstance(o, dict)}
    missing = [
        o.get("id") for o in options if isinstance(o, dict) and o.get("id") not in now
    ]
    name = option.get("id")
    s.check(
        "ACP-AGENT-CONFIG-002",
        not missing and now.get(name) == wanted,
        f"set {name!r} to {wanted!r}: the answer lacks {missing!r}"
        if missing
        else f"set {name!r} to {wanted!r}: the answer holds {now.get(name)!r}",
        f"set {name!r} to {wanted!r}: every option answered",
    )


SCENARIOS = (
    ScenarioSpec(
        "config-options",
        ("agent.config",),
        config_options,
        ("initialize", "session/new", "session/set_config_option"),
    ),
)
