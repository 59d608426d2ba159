"""Method stubs: the table, interfaces, dispatcher and senders cover every method; the runtime works."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import socket
from types import ModuleType
from typing import Any

import pytest

from acpgen import ir
from tests.support.bindings import PACKAGES
from tests.generated.test_stability import protocols

ROLE_OF: dict[str, tuple[str, str]] = {"agent": ("Agent", "AgentSender"), "client": ("Client", "ClientSender")}


def module(variant: str, name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGES[variant]}.{name}")


def protocol(variant: str) -> ir.Protocol:
    return protocols()[0 if variant == "stable" else 1]


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_every_method_has_a_table_entry_interface_method_route_and_sender(variant: str) -> None:
    table = {(s.wire, s.side, s.kind): s for s in module(variant, "methods").METHODS}
    interfaces, senders = module(variant, "interfaces"), module(variant, "senders")
    dispatch = module(variant, "dispatch")
    assert len(table) == len(protocol(variant).methods)
    for m in protocol(variant).methods:
        spec = table[(m.wire, m.side, m.kind)]
        assert spec.python_name == m.python_name and spec.stable == m.stable
        if m.side == "protocol":
            continue  # handled by the runtime ($/cancel_request)
        interface, sender = {"proxy": ("Proxy", "ProxySender")}.get(m.side) or ROLE_OF.get(
            m.side, ("Agent", "AgentSender")
        )
        assert inspect.iscoroutinefunction(getattr(getattr(interfaces, interface), m.python_name))
        assert inspect.iscoroutinefunction(getattr(getattr(senders, sender), m.python_name))
        routes = dispatch.Dispatcher(object(), module(variant, "methods").handled_by(m.side))
        assert m.wire in (routes._requests if m.kind == "request" else routes._notifications)


def test_stable_build_has_no_unstable_method() -> None:
    specs = module("stable", "methods").METHODS
    assert specs and all(s.stable for s in specs)
    unstable = {(m.side, m.wire) for m in protocol("unstable").methods if not m.stable}
    assert unstable and not unstable & {(s.side, s.wire) for s in specs}
    assert not hasattr(module("stable", "interfaces"), "Proxy")


def test_unstable_methods_are_marked_and_optional() -> None:
    agent = module("unstable", "interfaces").Agent
    assert "UNSTABLE" in (agent.fork_session.__doc__ or "")
    assert "fork_session" not in agent.__abstractmethods__
    assert "new_session" in agent.__abstractmethods__


# --- dispatcher -----------------------------------------------------------------------------------


class _Handler:
    def __init__(self, models: ModuleType, errors: ModuleType) -> None:
        self.models, self.errors, self.seen = models, errors, []

    async def new_session(self, params: Any) -> Any:
        self.seen.append(params)
        if params.cwd == "/boom":
            raise RuntimeError("secret internal detail")
        if params.cwd == "/denied":
            raise self.errors.RequestError(-32000, "Authentication required")
        return self.models.NewSessionResponse(session_id="s-1")

    async def cancel(self, params: Any) -> None:
        self.seen.append(params)

    async def authenticate(self, params: Any) -> None:
        self.seen.append(params)

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"echo": method, "params": params}

    async def ext_notification(self, method: str, params: Any) -> None:
        self.seen.append((method, params))


def _dispatch(message: dict[str, Any]) -> tuple[Any, _Handler]:
    handler = _Handler(module("stable", "models"), module("stable", "errors"))
    methods = module("stable", "methods").handled_by("agent", "both")
    dispatcher = module("stable", "dispatch").Dispatcher(handler, methods)
    return _on_the_wire(asyncio.run(dispatcher.dispatch(message))), handler


def _on_the_wire(response: Any) -> Any:
    """A response as the peer reads it (results are serialised straight to JSON bytes)."""
    return None if response is None else json.loads(module("stable", "connection").encode(response))


def test_dispatch_validates_calls_and_serialises_by_alias() -> None:
    response, handler = _dispatch(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}
    )
    assert response == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s-1"}}
    assert handler.seen[0].cwd == "/w"


def test_dispatch_reuses_its_route_and_reads_a_none_result_as_the_defaults() -> None:
    handler = _Handler(module("stable", "models"), module("stable", "errors"))
    dispatcher = module("stable", "dispatch").Dispatcher(handler, module("stable", "methods").handled_by("agent"))
    for request_id, method_id in ((1, "a"), (2, "b")):
        message = {"jsonrpc": "2.0", "id": request_id, "method": "authenticate", "params": {"methodId": method_id}}
        response = _on_the_wire(asyncio.run(dispatcher.dispatch(message)))
        assert response == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    assert [p.method_id for p in handler.seen] == ["a", "b"]
    bad = {"jsonrpc": "2.0", "id": 3, "method": "authenticate", "params": {"methodId": 7}}
    assert asyncio.run(dispatcher.dispatch(bad))["error"]["code"] == -32602


def test_dispatch_unknown_method() -> None:
    response, _ = _dispatch({"jsonrpc": "2.0", "id": 2, "method": "session/frobnicate", "params": {}})
    assert response["error"]["code"] == -32601


def test_dispatch_invalid_params_carries_the_validation_details() -> None:
    response, handler = _dispatch({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 5}})
    assert response["error"]["code"] == -32602
    locs = [tuple(e["loc"]) for e in response["error"]["data"]]
    assert ("cwd",) in locs and ("mcpServers",) in locs
    assert handler.seen == []


def test_dispatch_handler_error_keeps_its_code() -> None:
    response, _ = _dispatch(
        {"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "/denied", "mcpServers": []}}
    )
    assert response["error"] == {"code": -32000, "message": "Authentication required"}


def test_dispatch_unexpected_exception_is_internal_error_without_details() -> None:
    response, _ = _dispatch(
        {"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/boom", "mcpServers": []}}
    )
    assert response["error"]["code"] == -32603
    assert "secret" not in str(response) and "Traceback" not in str(response)


def test_dispatch_extension_methods_go_to_the_hooks() -> None:
    response, _ = _dispatch({"jsonrpc": "2.0", "id": 6, "method": "_acme/ping", "params": {"x": 1}})
    assert response["result"] == {"echo": "_acme/ping", "params": {"x": 1}}
    response, handler = _dispatch({"jsonrpc": "2.0", "method": "_acme/poke", "params": {"y": 2}})
    assert response is None and handler.seen == [("_acme/poke", {"y": 2})]


def test_notifications_never_produce_a_response() -> None:
    assert _dispatch({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})[0] is None
    assert _dispatch({"jsonrpc": "2.0", "method": "session/cancel", "params": {"bad": 1}})[0] is None
    assert _dispatch({"jsonrpc": "2.0", "method": "no/such", "params": {}})[0] is None


# --- runtime: two connections over a socket pair ---------------------------------------------------


async def _pair(agent_handler: Any, client_handler: Any) -> tuple[Any, Any, list[asyncio.Task[None]]]:
    connection, dispatch, methods = (
        module("stable", "connection"),
        module("stable", "dispatch"),
        module("stable", "methods"),
    )
    left, right = socket.socketpair()
    a_reader, a_writer = await asyncio.open_connection(sock=left)
    c_reader, c_writer = await asyncio.open_connection(sock=right)
    agent_side = connection.Connection(
        connection.LineTransport(a_reader, a_writer),
        dispatch.Dispatcher(agent_handler, methods.handled_by("agent", "both")).dispatch,
    )
    client_side = connection.Connection(
        connection.LineTransport(c_reader, c_writer),
        dispatch.Dispatcher(client_handler, methods.handled_by("client", "both")).dispatch,
    )
    tasks = [asyncio.create_task(agent_side.run()), asyncio.create_task(client_side.run())]
    return agent_side, client_side, tasks


def test_senders_and_connection_round_trip_with_concurrent_calls_both_ways() -> None:
    models, senders = module("stable", "models"), module("stable", "senders")

    class Client:
        async def read_text_file(self, params: Any) -> Any:
            await asyncio.sleep(0)
            return models.ReadTextFileResponse(content=f"contents of {params.path}")

    class Agent:
        client: Any = None

        async def new_session(self, params: Any) -> Any:
            texts = await asyncio.gather(
                *(
                    self.client.read_text_file(models.ReadTextFileRequest(session_id="s", path=f"/f{i}"))
                    for i in range(3)
                )
            )
            return models.NewSessionResponse(session_id="|".join(t.content for t in texts))

    async def scenario() -> None:
        agent = Agent()
        agent_side, client_side, tasks = await _pair(agent, Client())
        agent.client = senders.ClientSender(agent_side)
        to_agent = senders.AgentSender(client_side)
        result = await to_agent.new_session(models.NewSessionRequest(cwd="/w", mcp_servers=[]))
        assert result.session_id == "contents of /f0|contents of /f1|contents of /f2"
        with pytest.raises(module("stable", "errors").RequestError) as caught:
            await to_agent.load_session(models.LoadSessionRequest(session_id="s", cwd="/w", mcp_servers=[]))
        assert caught.value.code == -32601
        await client_side.close()
        await asyncio.wait_for(asyncio.gather(*tasks), 5)

    asyncio.run(scenario())


def test_cancel_request_cancels_the_handler_and_eof_fails_pending_requests() -> None:
    models, senders, errors = module("stable", "models"), module("stable", "senders"), module("stable", "errors")
    started = asyncio.Event()

    class SlowAgent:
        async def new_session(self, params: Any) -> Any:
            started.set()
            await asyncio.sleep(3600)

    async def scenario() -> None:
        agent_side, client_side, tasks = await _pair(SlowAgent(), object())
        call = asyncio.create_task(client_side.request("session/new", {"cwd": "/w", "mcpServers": []}))
        await started.wait()
        await client_side.notify("$/cancel_request", {"requestId": 1})
        with pytest.raises(errors.RequestError) as caught:
            await asyncio.wait_for(call, 5)
        assert caught.value.code == -32800
        pending = asyncio.create_task(
            senders.AgentSender(client_side).new_session(models.NewSessionRequest(cwd="/w", mcp_servers=[]))
        )
        await asyncio.sleep(0.05)
        await agent_side.close()
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(pending, 5)
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)

    asyncio.run(scenario())


def test_messages_longer_than_the_stream_reader_limit_pass() -> None:
    models, senders = module("stable", "models"), module("stable", "senders")
    big = "x" * 300_000  # asyncio's default line limit is 64 KiB

    class Client:
        async def read_text_file(self, params: Any) -> Any:
            return models.ReadTextFileResponse(content=big)

    async def scenario() -> None:
        agent_side, client_side, tasks = await _pair(object(), Client())
        result = await senders.ClientSender(agent_side).read_text_file(
            models.ReadTextFileRequest(session_id="s", path="/a")
        )
        assert result.content == big
        await client_side.close()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)

    asyncio.run(scenario())


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_initialize_refuses_a_protocol_version_the_client_does_not_speak(variant: str) -> None:
    models, senders = module(variant, "models"), module(variant, "senders")
    initialization = module(variant, "initialization")

    class Agent:
        def __init__(self, version: int) -> None:
            self.version = version

        async def request(self, method: str, params: Any = None, *, serializer: Any = None, read: Any = None) -> Any:
            assert method == "initialize" and read is not None
            return read({"protocolVersion": self.version})

        async def notify(self, method: str, params: Any = None, *, serializer: Any = None) -> None: ...

    params = models.InitializeRequest(protocol_version=1)
    answered = asyncio.run(senders.AgentSender(Agent(1)).initialize(params))
    assert answered.protocol_version == 1
    with pytest.raises(initialization.UnsupportedVersionError, match="answered protocol version 2") as caught:
        asyncio.run(senders.AgentSender(Agent(2)).initialize(params))
    assert caught.value.answered == 2 and caught.value.supported == (1,)


def test_optional_notification_defaults_ignore_the_message() -> None:
    interfaces, models = module("stable", "interfaces"), module("stable", "models")
    client = type("C", (interfaces.Client,), {name: None for name in interfaces.Client.__abstractmethods__})()
    params = models.CompleteElicitationNotification.model_construct()
    assert asyncio.run(interfaces.Client.complete_elicitation(client, params)) is None
