"""Agent scenarios of ``initialize``: the handshake and what it advertises, one with
``protocolVersion`` alone, and one asking for a version the agent cannot speak (the
answer must be a version it does speak, asked of a fresh process, never an echo)."""

from __future__ import annotations

from typing import Any

from .registry import CheckSpec, ScenarioSpec
from .scenario import Scenario, describe, result_of

ORDER = 10
UNSUPPORTED_VERSION = 65535
CHECKS = (
    CheckSpec(
        "agent.initialize",
        ("agent",),
        judges=(
            "ACP-AGENT-INIT-001",
            "ACP-AGENT-INIT-002",
            "ACP-AGENT-INIT-004",
            "ACP-AGENT-AUTH-001",
            "ACP-AGENT-CAPS-001",
        ),
        handlers=("initialize",),
    ),
    CheckSpec("agent.initialize-minimal", ("agent",), judges=("ACP-AGENT-INIT-005",)),
    CheckSpec(
        "agent.initialize-unsupported-version",
        ("agent",),
        judges=("ACP-AGENT-INIT-003",),
    ),
)


def initialize(s: Scenario) -> None:
    s.step("ACP-AGENT-INIT-001", s.kit.derived("required-handler", "initialize"))
    answer = s.driver.need(
        "initialize", s.init_params(), timeout=s.options.startup_timeout
    )
    s.handler("initialize", answer)
    result = result_of(answer)
    if result is None:
        s.fail("ACP-AGENT-INIT-001", f"initialize: {describe(answer)}")
        s.run.blocked = f"initialize was answered {describe(answer)}"
        return
    version = result.get("protocolVersion")
    if type(version) is not int:
        s.fail("ACP-AGENT-INIT-001", f"protocolVersion is not an integer: {version!r}")
        s.run.blocked = f"initialize answered protocolVersion {version!r}"
    elif s.judged_ok("message-result", "initialize"):
        s.passed("ACP-AGENT-INIT-001", f"protocolVersion {version}")
    else:
        s.fail(
            "ACP-AGENT-INIT-001",
            "the answer is no valid InitializeResponse (see the -RESULT requirement)",
        )
    if version == s.kit.protocol_version:
        s.passed("ACP-AGENT-INIT-002", f"answered {version}, as asked")
    else:
        s.fail(
            "ACP-AGENT-INIT-002",
            f"asked for {s.kit.protocol_version}, answered {version!r}",
        )
        s.run.blocked = s.run.blocked or (
            f"the agent answered protocol version {version!r}, not "
            f"{s.kit.protocol_version}"
        )
    _info(s, result.get(s.kit.wire.agent_info))
    _auth_ids(s, result.get("authMethods"))
    _archive(s, result.get(s.kit.wire.agent_capabilities))


def _info(s: Scenario, info: Any) -> None:
    if isinstance(info, dict) and info.get("name") and info.get("version"):
        s.passed("ACP-AGENT-INIT-004", f"{info.get('name')} {info.get('version')}")
    else:
        s.fail("ACP-AGENT-INIT-004", "no agentInfo with name and version")


def _auth_ids(s: Scenario, methods: Any) -> None:
    listed = methods if isinstance(methods, list) else []
    ids = [m.get("id") for m in listed if isinstance(m, dict)]
    if not ids:
        s.skip("ACP-AGENT-AUTH-001", "no authMethods listed")
    elif len(ids) == len(set(ids)):
        s.passed("ACP-AGENT-AUTH-001", f"{len(ids)} distinct ids")
    else:
        s.fail("ACP-AGENT-AUTH-001", f"authMethods ids repeat: {ids}")


def _archive(s: Scenario, capabilities: Any) -> None:
    caps = capabilities if isinstance(capabilities, dict) else {}
    sessions = caps.get("sessionCapabilities")
    sessions = sessions if isinstance(sessions, dict) else {}
    if sessions.get("archive") is None:
        s.skip("ACP-AGENT-CAPS-001", "sessionCapabilities.archive is not advertised")
    elif sessions.get("list") is None:
        s.fail("ACP-AGENT-CAPS-001", "archive advertised without list")
    else:
        s.passed("ACP-AGENT-CAPS-001", "archive advertised with list")


def initialize_minimal(s: Scenario) -> None:
    s.step("ACP-AGENT-INIT-005")
    answer = s.driver.need(
        "initialize",
        {"protocolVersion": s.kit.protocol_version},
        timeout=s.options.startup_timeout,
    )
    s.check(
        "ACP-AGENT-INIT-005",
        result_of(answer) is not None,
        f"initialize with protocolVersion only: {describe(answer)}",
        "answered with a result",
    )


def initialize_unsupported(s: Scenario) -> None:
    params = dict(s.init_params(), protocolVersion=UNSUPPORTED_VERSION)
    s.step("ACP-AGENT-INIT-003")
    answer = s.driver.need("initialize", params, timeout=s.options.startup_timeout)
    version = (result_of(answer) or {}).get("protocolVersion")
    rid = "ACP-AGENT-INIT-003"
    if type(version) is not int:
        s.fail(
            rid, f"initialize with version {UNSUPPORTED_VERSION}: {describe(answer)}"
        )
        return
    if version == UNSUPPORTED_VERSION:
        s.fail(rid, f"the unsupported version {UNSUPPORTED_VERSION} was echoed")
        return
    again = s.fresh().need(
        "initialize",
        dict(s.init_params(), protocolVersion=version),
        timeout=s.options.startup_timeout,
    )
    spoken = (result_of(again) or {}).get("protocolVersion")
    s.check(
        rid,
        spoken == version,
        f"answered {version}, but asked for {version} a fresh process answers "
        f"{spoken!r}",
        f"answered {version}, which a fresh process accepts",
    )


SCENARIOS = (
    ScenarioSpec("initialize", ("agent.initialize",), initialize, ("initialize",)),
    ScenarioSpec(
        "initialize-minimal",
        ("agent.initialize-minimal",),
        initialize_minimal,
        ("initialize",),
    ),
    ScenarioSpec(
        "initialize-unsupported-version",
        ("agent.initialize-unsupported-version",),
        initialize_unsupported,
        ("initialize",),
    ),
)
