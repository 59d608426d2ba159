"""Judging what the peer writes, message by message: stdout hygiene, the JSON-RPC
envelope, each method's form, its params and results against the build's schema
strictly (:mod:`.strict`) and as the models read them, capability gating against what
the other side advertised, closed enums and unions, absolute paths and 1-based lines.

Every finding goes through :meth:`Judge.record`, which lets a scenario record only
the requirements its checks declare (:mod:`.registry`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ...connection.capabilities import Side
from ...wire.rpc import MethodSpec
from .kit import Kit
from .registry import MODES, CheckSpec
from .requirements import Finding
from .strict import SchemaViolation, StrictReader

MESSAGE_LIMIT = 400
"""Characters a finding's message keeps (the transcript in the JSON report has the
rest)."""
SCHEMA_FAMILIES = (
    "message-form",
    "message-params",
    "message-result",
    "message-params-optional",
    "message-result-optional",
    "closed-enum",
    "closed-union",
)
CHECKS = (
    CheckSpec("trace.lines-are-messages", MODES, judges=("ACP-PEER-TRANSPORT-001",)),
    CheckSpec("trace.utf8", ("agent",), judges=("ACP-PEER-TRANSPORT-002",)),
    CheckSpec("trace.response-envelope", MODES, judges=("ACP-PEER-RPC-003",)),
    CheckSpec("trace.requests-answered-once", MODES, judges=("ACP-PEER-RPC-005",)),
    CheckSpec("trace.ids-echoed", MODES, judges=("ACP-PEER-RPC-001",)),
    CheckSpec("trace.error-message-shape", MODES, judges=("ACP-PEER-RPC-011",)),
    CheckSpec("trace.schema", MODES, families=SCHEMA_FAMILIES),
    CheckSpec("trace.capability-gates", MODES, families=("capability-gate",)),
    CheckSpec(
        "trace.paths-absolute",
        MODES,
        judges=("ACP-AGENT-PROMPT-006", "ACP-CLIENT-SESSION-001"),
    ),
    CheckSpec("trace.lines-one-based", MODES, judges=("ACP-AGENT-PROMPT-007",)),
    CheckSpec("trace.no-custom-root-members", MODES, judges=("ACP-PEER-EXT-004",)),
)
"""The checks of every message, active in every scenario of every mode."""
ALWAYS = tuple(c.name for c in CHECKS)
PATHS = {"agent": "ACP-AGENT-PROMPT-006", "client": "ACP-CLIENT-SESSION-001"}


class Judge:
    """The findings of one run about the side ``under_test``."""

    def __init__(self, kit: Kit, under_test: Side) -> None:
        self.kit = kit
        self.under_test: Side = under_test
        self.peer: Side = "client" if under_test == "agent" else "agent"
        self.advertised: Any = kit.client_capabilities()
        """What the other side (the kit, or the trace's other side) advertised."""
        self.findings: list[Finding] = []
        self.disagreements: list[dict[str, Any]] = []
        """Where the schema and the models read a message differently."""
        self.scenario = ""
        self.active: tuple[str, ...] = ALWAYS
        """The checks whose requirements may be recorded now."""
        self.read = 0
        """Messages read from the peer over the run."""
        self._seen: set[tuple[str, str, str]] = set()
        self._strict = StrictReader(kit.document)
        self._adapters: dict[int, TypeAdapter[Any]] = {}
        self._closed = {
            r.subject: r.id
            for r in kit.requirements
            if r.family in ("closed-enum", "closed-union") and self._mine(r.side)
        }
        self._gates = {
            r.subject: r.id
            for r in kit.requirements
            if r.family == "capability-gate" and self._mine(r.side)
        }
        self._reach: dict[str, frozenset[str]] = {}

    def _mine(self, side: str) -> bool:
        return side in (self.under_test, "both")

    def begin(self, scenario: str, checks: Iterable[str]) -> None:
        """Findings from now on are ``scenario``'s, by ``checks`` (and the message
        checks)."""
        self.scenario = scenario
        self.active = (*ALWAYS, *checks)

    def record(self, requirement: str | None, status: str, message: str = "") -> None:
        """A finding; a PASS repeated in one scenario is kept once."""
        if requirement is None:
            return
        if not self.kit.registry.allow(requirement, self.active, self.scenario):
            return
        key = (requirement, status, self.scenario)
        if status == "PASS" and key in self._seen:
            return
        self._seen.add(key)
        if len(message) > MESSAGE_LIMIT:
            message = message[: MESSAGE_LIMIT - 3] + "..."
        self.findings.append(Finding(requirement, status, message, self.scenario))  # type: ignore[arg-type]

    # --- lines

    def line(self, raw: bytes) -> Any:
        """The message a line holds, None when it holds none (and that judged)."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.record(
                "ACP-PEER-TRANSPORT-002", "FAIL", f"not UTF-8 ({error}): {raw[:120]!r}"
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
                f"a line that is no JSON-RPC 2.0 message: {text[:200]!r}",
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
            kind = "request" if is_request else "notification"
            self.record(form, "FAIL", f"`{spec.wire}` sent as a {kind}")
        value = self._judge_payload(spec, "params", message.get("params"))
        if value is not None:
            self._gating(spec.wire, value)
            self._paths_and_lines(spec.wire, value)
        return spec

    def answer(self, spec: MethodSpec | None, message: dict[str, Any]) -> None:
        """An answer of the peer's to a request it was sent."""
        self._envelope(message)
        error = message.get("error")
        if isinstance(error, dict):
            _error_message(self, error)
        if spec is None or "result" not in message or "error" in message:
            return
        if spec.result is None:
            return
        value = self._judge_payload(spec, "result", message["result"])
        if value is not None:
            self._gating(spec.wire, value)
            self._paths_and_lines(spec.wire, value)

    def _envelope(self, message: dict[str, Any]) -> None:
        rid = "ACP-PEER-RPC-003"
        has_result, has_error = "result" in message, "error" in message
        if "id" not in message:
            self.record(rid, "FAIL", f"an answer with no id member: {_short(message)}")
        elif has_result == has_error:
            both = "both" if has_result else "neither"
            self.record(
                rid,
                "FAIL",
                f"an answer with {both} result and error: {_short(message)}",
            )
        elif has_error and not _error_shape(message["error"]):
            self.record(
                rid,
                "FAIL",
                f"an error that is no {{code: integer, message: string}}: "
                f"{_short(message)}",
            )
        else:
            self.record(rid, "PASS")

    # --- a payload: strictly, then as the models read it

    def _judge_payload(self, spec: MethodSpec, part: str, payload: Any) -> Any:
        definition = self._definition(spec, part)
        required = self.kit.derived(f"message-{part}", spec.wire)
        optional = self.kit.derived(f"message-{part}-optional", spec.wire)
        model = spec.params if part == "params" else spec.result
        value, model_error = self._models(model, payload)
        if definition is None:  # no schema at hand: the models decide
            self.record(required, "FAIL" if model_error else "PASS", model_error)
            return value
        found = self._strict.violations(definition, payload)
        hard = [v for v in found if v.required]
        soft = [v for v in found if not v.required]
        lenient = " (the models read it leniently)" if value is not None else ""
        self._verdict(required, spec.wire, part, hard, lenient)
        self._verdict(optional, spec.wire, part, soft, lenient)
        self._closed_types(spec.wire, definition, found)
        if (found and value is not None) or (not found and model_error):
            self.disagreements.append(
                {
                    "method": spec.wire,
                    "part": part,
                    "schema": [v.line() for v in found] or "valid",
                    "models": model_error or "read",
                    "scenario": self.scenario,
                }
            )
        return value

    def _verdict(
        self,
        rid: str | None,
        wire: str,
        part: str,
        found: list[SchemaViolation],
        lenient: str,
    ) -> None:
        if not found:
            self.record(rid, "PASS")
            return
        lines = "; ".join(v.line() for v in found[:3])
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        self.record(rid, "FAIL", f"`{wire}` {part}: {lines}{more}{lenient}")

    def _definition(self, spec: MethodSpec, part: str) -> str | None:
        names = self.kit.definitions.get(f"{spec.side} {spec.wire}")
        if names is None:
            return None
        return names[0] if part == "params" else names[1]

    def _models(self, model: Any, payload: Any) -> tuple[Any, str]:
        adapter = self._adapters.get(id(model))
        if adapter is None:
            adapter = self._adapters[id(model)] = TypeAdapter(model)
        try:
            return adapter.validate_python(payload), ""
        except ValidationError as error:
            first = error.errors()[0]
            where = "/".join(str(p) for p in first["loc"])
            return None, f"the models do not read it: {first['msg']} at /{where}"

    def _closed_types(
        self, wire: str, definition: str, found: list[SchemaViolation]
    ) -> None:
        """A closed enum or union the value breaks where the schema requires it FAILs
        its requirement; every other one it can hold PASSes."""
        broken: dict[str, SchemaViolation] = {}
        for v in found:
            name = v.schema_path.removeprefix("#/$defs/").split("/", 1)[0]
            if name in self._closed and v.required and _is_choice(v):
                broken.setdefault(name, v)
        for name in self._reachable(definition):
            rid = self._closed.get(name)
            if rid is None:
                continue
            bad = broken.get(name)
            if bad is None:
                self.record(rid, "PASS")
            else:
                self.record(rid, "FAIL", f"`{wire}`: {bad.line()}")

    def _reachable(self, definition: str) -> frozenset[str]:
        """The definitions a value of ``definition`` can hold (following ``$ref``)."""
        if definition not in self._reach:
            defs = self.kit.document.get("$defs", {})
            seen: set[str] = set()
            stack = [definition]
            while stack:
                name = stack.pop()
                if name in seen or name not in defs:
                    continue
                seen.add(name)
                stack.extend(_refs(defs[name]))
            self._reach[definition] = frozenset(seen)
        return self._reach[definition]

    # --- gating, paths, lines, custom members

    def _gating(self, wire: str, value: Any) -> None:
        for violation in self.kit.violations(self.peer, self.advertised, wire, value):
            rid = self._gates.get(violation.rule.subject)
            self.record(rid, "FAIL", f"`{wire}`: {violation.message}")

    def _paths_and_lines(self, wire: str, value: Any) -> None:
        paths, lines, extra = _walk(
            value, self.kit.absolute_paths, self.kit.one_based, self.kit.catch_alls
        )
        rid = PATHS[self.under_test]
        for path in paths:
            if isinstance(path, str) and not path.startswith("/"):
                self.record(
                    rid, "FAIL", f"`{wire}` names the path {path!r}, not absolute"
                )
            else:
                self.record(rid, "PASS")
        if self.under_test == "agent":
            for line in lines:
                if isinstance(line, int) and line < 1:
                    self.record(
                        "ACP-AGENT-PROMPT-007",
                        "FAIL",
                        f"`{wire}` names line {line}: line numbers start at 1",
                    )
                else:
                    self.record("ACP-AGENT-PROMPT-007", "PASS")
        for where in dict.fromkeys(extra):
            self.record(
                "ACP-PEER-EXT-004",
                "FAIL",
                f"`{wire}` adds {where} to a spec type (custom data goes in `_meta`)",
            )
        if not extra:
            self.record("ACP-PEER-EXT-004", "PASS")

    def finish(self) -> None:
        """Every gate not broken held over the run; what no message showed is
        SKIPPED."""
        failed = {f.requirement for f in self.findings if f.status == "FAIL"}
        for rid in self._gates.values():
            if rid in failed:
                continue
            if self.read:
                self.record(rid, "PASS", "never used unadvertised, in any scenario")
            else:
                self.record(rid, "SKIPPED", "the peer wrote no message")
        seen = {f.requirement for f in self.findings}
        shown = {
            "ACP-AGENT-PROMPT-006",
            "ACP-AGENT-PROMPT-007",
            "ACP-CLIENT-SESSION-001",
        }
        for r in self.kit.requirements:
            if r.id in seen or not self._mine(r.side):
                continue
            if (
                r.family in SCHEMA_FAMILIES
                or r.id in shown
                or r.id == "ACP-PEER-EXT-004"
            ):
                self.record(
                    r.id, "SKIPPED", "not observed: the peer sent nothing it applies to"
                )


def _is_choice(v: SchemaViolation) -> bool:
    return " is none of " in v.message or "matches no branch" in v.message


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append(ref.rsplit("/", 1)[-1])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _walk(
    value: Any,
    paths: Mapping[str, tuple[str, ...]],
    lines: Mapping[str, tuple[str, ...]],
    catch_alls: frozenset[str],
) -> tuple[list[Any], list[Any], list[str]]:
    """The absolute-path and 1-based-line values a read message holds, and the custom
    members (``model_extra``) of its spec types."""
    found_paths: list[Any] = []
    found_lines: list[Any] = []
    extra: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            name = type(item).__name__
            for attr in paths.get(name, ()):
                got = getattr(item, attr, None)
                found_paths += got if isinstance(got, list) else [got] if got else []
            for attr in lines.get(name, ()):
                got = getattr(item, attr, None)
                found_lines += [got] if got is not None else []
            for key in item.model_extra or {} if name not in catch_alls else ():
                if not key.startswith("_"):
                    extra.append(f"`{key}` to `{name}`")
            stack.extend(getattr(item, f) for f in type(item).model_fields)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found_paths, found_lines, extra


def _error_shape(error: Any) -> bool:
    return (
        isinstance(error, dict)
        and type(error.get("code")) is int
        and isinstance(error.get("message"), str)
    )


def _error_message(judge: Judge, error: dict[str, Any]) -> None:
    """An error's message is concise: non-empty, one line (ACP-PEER-RPC-011)."""
    text = error.get("message")
    if not isinstance(text, str):
        return  # judged by ACP-PEER-RPC-003
    if text.strip() and "\n" not in text and "\r" not in text:
        judge.record("ACP-PEER-RPC-011", "PASS")
    else:
        judge.record(
            "ACP-PEER-RPC-011",
            "FAIL",
            f"error {error.get('code')!r} has the message {text[:200]!r}: "
            "not one non-empty line",
        )


def _short(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "..."
