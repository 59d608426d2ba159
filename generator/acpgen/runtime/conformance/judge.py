"""Judging what the peer writes, message by message, with the package's models and
rules: stdout hygiene, the JSON-RPC envelope, each method's form, params and result
as the models read them, capability gating against what the kit advertised, closed
enums and unions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..connection.capabilities import Side, Violation
from ..wire.rpc import MethodSpec
from .requirements import Check, Requirement

Violations = Callable[[Side, Any, str, Any], list[Violation]]
_TAG_ERRORS = {"literal_error", "union_tag_invalid", "union_tag_not_found", "enum"}


@dataclass(frozen=True, slots=True)
class Kit:
    """What the kit knows of the package's schema, handed in by its ``conformance`` "
    "module."""

    requirements: tuple[Requirement, ...]
    methods: tuple[MethodSpec, ...]
    violations: Violations
    """``capabilities.violations``: the rules a message breaks, given what the peer "
    "advertised."""
    client_capabilities: type[BaseModel]
    protocol_version: int
    schema: str
    """What the package was generated from (schema package, version, file, build)."""
    package: str
    agent_capabilities: type[BaseModel] | None = None
    """The models' ``AgentCapabilities`` (what a trace's client is judged against)."""

    def derived(self, family: str, subject: str, side: str | None = None) -> str | None:
        """The id of a derived requirement of ``family`` about ``subject`` (optionally
        the side it judges), None when the build has none."""
        for r in self.requirements:
            if (
                r.family == family
                and r.subject == subject
                and (side is None or r.side == side)
            ):
                return r.id
        return None

    def method(self, wire: str, sides: Iterable[str]) -> MethodSpec | None:
        wanted = tuple(sides)
        return next(
            (m for m in self.methods if m.wire == wire and m.side in wanted), None
        )


class Judge:
    """The checks of one run, from every message of every scenario."""

    def __init__(self, kit: Kit, under_test: str) -> None:
        self.kit = kit
        self.under_test = under_test
        self.peer: Side = "client" if under_test == "agent" else "agent"
        self.advertised: Any = kit.client_capabilities()
        self.checks: list[Check] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._adapters: dict[int, TypeAdapter[Any]] = {}
        self._reach: dict[int, frozenset[str]] = {}
        self._closed = {
            r.subject: r.id
            for r in kit.requirements
            if r.family in ("closed-enum", "closed-union")
            and r.side in (under_test, "both")
        }
        self._gates = {
            r.subject: r.id
            for r in kit.requirements
            if r.family == "capability-gate" and r.side in (under_test, "both")
        }
        self.scenario = ""
        self.read = 0
        """Messages read from the peer over the run."""

    def record(self, requirement: str | None, status: str, message: str = "") -> None:
        if requirement is None:
            return
        key = (requirement, status, self.scenario)
        if status == "PASS" and key in self._seen:
            return
        self._seen.add(key)
        self.checks.append(Check(requirement, status, message, self.scenario))  # type: ignore[arg-type]

    # --- lines

    def line(self, raw: bytes) -> Any:
        """The message a stdout line holds, None when it holds none (and that "
        "judged)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.record(
                "ACP-PEER-TRANSPORT-002",
                "FAIL",
                f"stdout is not UTF-8 ({error}): {raw[:120]!r}",
            )
            return None
        self.record("ACP-PEER-TRANSPORT-002", "PASS")
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.record(
                "ACP-PEER-TRANSPORT-001",
                "FAIL",
                f"a stdout line that is no JSON-RPC 2.0 message: {text[:200]!r}",
            )
            return None
        self.record("ACP-PEER-TRANSPORT-001", "PASS")
        self.read += 1
        return message

    # --- calls and answers

    def call(self, message: dict[str, Any]) -> MethodSpec | None:
        """A request or notification of the peer's: its form, params and gating."""
        method = message.get("method")
        spec = (
            self.kit.method(method, (self.peer, "protocol", "both"))
            if isinstance(method, str)
            else None
        )
        if spec is None:
            return None
        is_request = "id" in message
        form = self.kit.derived("message-form", spec.wire)
        if is_request == (spec.kind == "request"):
            self.record(form, "PASS")
        else:
            self.record(
                form,
                "FAIL",
                f"`{spec.wire}` sent as a "
                f"{'request' if is_request else 'notification'}",
            )
        value = self._read(
            spec.params,
            message.get("params"),
            self.kit.derived("message-params", spec.wire),
            spec.wire,
        )
        if value is not None:
            self._gating(spec.wire, value)
        for path in _paths(spec.wire, message.get("params")):
            if isinstance(path, str) and not path.startswith("/"):
                self.record(
                    "ACP-AGENT-PROMPT-006",
                    "FAIL",
                    f"`{spec.wire}` names the path {path!r}, which is not absolute",
                )
            else:
                self.record("ACP-AGENT-PROMPT-006", "PASS")
        for line in _lines(spec.wire, message.get("params")):
            if type(line) is int and line < 1:
                self.record(
                    "ACP-AGENT-PROMPT-007",
                    "FAIL",
                    f"`{spec.wire}` names line {line}: line numbers start at 1",
                )
            else:
                self.record("ACP-AGENT-PROMPT-007", "PASS")
        return spec

    def answer(self, spec: MethodSpec | None, message: dict[str, Any]) -> None:
        """An answer of the peer's to a request of the kit's."""
        has_result, has_error = "result" in message, "error" in message
        envelope = "ACP-PEER-RPC-003"
        if has_result == has_error:
            self.record(
                envelope,
                "FAIL",
                f"an answer with {'both' if has_result else 'neither'} result and "
                f"error: {_short(message)}",
            )
        elif has_error:
            error = message["error"]
            if not (
                isinstance(error, dict)
                and type(error.get("code")) is int
                and isinstance(error.get("message"), str)
            ):
                self.record(
                    envelope,
                    "FAIL",
                    f"an error that is no {{code: integer, message: string}}: "
                    f"{_short(message)}",
                )
            else:
                self.record(envelope, "PASS")
        else:
            self.record(envelope, "PASS")
        if (
            spec is not None
            and has_result
            and not has_error
            and spec.result is not None
        ):
            value = self._read(
                spec.result,
                message["result"],
                self.kit.derived("message-result", spec.wire),
                spec.wire,
            )
            if value is not None:
                self._gating(spec.wire, value)

    def _read(
        self, model: Any, payload: Any, requirement: str | None, wire: str
    ) -> Any:
        adapter = self._adapters.get(id(model))
        if adapter is None:
            adapter = self._adapters[id(model)] = TypeAdapter(model)
        reach = self._reach.get(id(model))
        if reach is None:
            reach = self._reach[id(model)] = _reachable(model)
        closed = [(name, rid) for name, rid in self._closed.items() if name in reach]
        try:
            value = adapter.validate_python(payload)
        except ValidationError as error:
            first = error.errors()[0]
            where = "/".join(str(p) for p in first["loc"])
            self.record(
                requirement,
                "FAIL",
                f"`{wire}`: the models do not read it: {first['msg']} at "
                f"{where or '(top)'}",
            )
            if any(e["type"] in _TAG_ERRORS for e in error.errors()):
                for name, rid in closed:
                    self.record(
                        rid,
                        "FAIL",
                        f"`{wire}` holds a value or tag its schema does not list "
                        f"({first['msg']} at {where}); it can hold `{name}`",
                    )
            return None
        self.record(requirement, "PASS")
        for _, rid in closed:
            self.record(rid, "PASS")
        return value

    def _gating(self, wire: str, value: Any) -> None:
        for violation in self.kit.violations(self.peer, self.advertised, wire, value):
            rid = self._gates.get(violation.rule.subject)
            self.record(rid, "FAIL", f"`{wire}`: {violation.message}")

    def finish_gates(self) -> None:
        """Every gate not broken held over the whole run (negative checks judge what
        was seen: nothing, when the peer wrote no message at all)."""
        failed = {c.requirement for c in self.checks if c.status == "FAIL"}
        for rid in self._gates.values():
            if rid in failed:
                continue
            if self.read:
                self.record(rid, "PASS", "never used unadvertised, in any scenario")
            else:
                self.record(rid, "SKIPPED", "the peer wrote no message")
        seen = {c.requirement for c in self.checks}
        for r in self.kit.requirements:
            if (
                (
                    r.family
                    in (
                        "message-form",
                        "message-params",
                        "message-result",
                        "closed-enum",
                        "closed-union",
                    )
                    or r.id in ("ACP-AGENT-PROMPT-006", "ACP-AGENT-PROMPT-007")
                )
                and r.id not in seen
                and r.side in (self.under_test, "both")
            ):
                self.record(
                    r.id, "SKIPPED", "not observed: the peer sent nothing it applies to"
                )


def _paths(wire: str, params: Any) -> list[Any]:
    """The file system paths a message of the agent's names (the spec wants them "
    "absolute)."""
    if not isinstance(params, dict):
        return []
    if wire in ("fs/read_text_file", "fs/write_text_file"):
        return [params.get("path")]
    if wire == "terminal/create":
        return [params["cwd"]] if params.get("cwd") is not None else []
    update = params.get("update") if wire == "session/update" else None
    found: list[Any] = []
    if isinstance(update, dict):
        for location in update.get("locations") or []:
            if isinstance(location, dict):
                found.append(location.get("path"))
        for content in (
            update.get("content") or []
            if isinstance(update.get("content"), list)
            else []
        ):
            if isinstance(content, dict) and content.get("type") == "diff":
                found.append(content.get("path"))
    return found


def _lines(wire: str, params: Any) -> list[Any]:
    """The line numbers a message of the agent's names (the spec wants them 1-based)."""
    if not isinstance(params, dict):
        return []
    if wire == "fs/read_text_file":
        return [params["line"]] if params.get("line") is not None else []
    update = params.get("update") if wire == "session/update" else None
    locations = update.get("locations") if isinstance(update, dict) else None
    return [
        location["line"]
        for location in (locations if isinstance(locations, list) else [])
        if isinstance(location, dict) and location.get("line") is not None
    ]


def _short(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "..."


def _reachable(model: Any) -> frozenset[str]:
    """The names of the type aliases and model classes a value of ``model`` can hold."""
    seen: set[int] = set()
    names: set[str] = set()
    stack: list[Any] = [model]
    while stack:
        kind = stack.pop()
        if id(kind) in seen:
            continue
        seen.add(id(kind))
        name = getattr(kind, "__name__", None)
        value = getattr(kind, "__value__", None)
        if value is not None:
            names.add(str(name))
            stack.append(value)
        stack.extend(get_args(kind))
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names.add(kind.__name__)
            stack.extend(f.annotation for f in kind.model_fields.values())
    return frozenset(names)
