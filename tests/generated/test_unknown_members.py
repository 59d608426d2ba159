"""Members the schema does not name are kept on the models and written back (issue 25, item 3).

Real agents send what the pinned schema does not name: codex-acp advertises an authentication
method ``{"type": "env_var", ..., "vars": [...]}`` (read by ``AuthMethod``'s untagged default
branch, the agent method) and answers ``session/new`` with a ``models`` object. A proxy or a
logging client built on these bindings must pass them on: parse-then-dump of a message is the
message, in both builds. Typed access is unchanged; the unknown members are the model's
``model_extra``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from tests.support.bindings import models

ENV_VAR_METHOD = {
    "id": "openai-api-key",
    "name": "Use OPENAI_API_KEY",
    "description": "Requires setting the `OPENAI_API_KEY` environment variable.",
    "type": "env_var",
    "vars": [{"name": "OPENAI_API_KEY", "label": "OpenAI API key", "secret": True}],
}
"""An authentication method of the kind codex-acp advertises (a type the pinned schema lacks)."""

INITIALIZE_RESULT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
    },
    "authMethods": [
        {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login."},
        ENV_VAR_METHOD,
    ],
    "agentInfo": {"name": "codex-acp", "title": "Codex", "version": "0.16.0"},
}

NEW_SESSION_RESULT = {
    "sessionId": "019a6f0e-3c52-7d21-a1e4-08b5c2d9f317",
    "modes": {
        "currentModeId": "auto",
        "availableModes": [
            {"id": "read-only", "name": "Read Only", "description": "Requires approval to edit files."},
            {"id": "auto", "name": "Default", "description": "Edits files in the workspace."},
        ],
    },
    "models": {
        "currentModelId": "gpt-5-codex/medium",
        "availableModels": [
            {"modelId": "gpt-5-codex/low", "name": "gpt-5-codex (low)", "description": "Fastest."},
            {"modelId": "gpt-5-codex/medium", "name": "gpt-5-codex (medium)"},
        ],
    },
}

TOOL_CALL_UPDATE = {
    "sessionId": "019a6f0e-3c52-7d21-a1e4-08b5c2d9f317",
    "update": {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_7",
        "status": "completed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "ok", "vendorHint": {"fold": True}}},
        ],
        "rawOutput": {"exit_code": 0},
        "terminal_info": {"terminal_id": "t1"},
    },
}
"""A session/update whose nested objects carry members the schema does not name."""

MESSAGES = {
    "InitializeResponse": INITIALIZE_RESULT,
    "NewSessionResponse": NEW_SESSION_RESULT,
    "SessionNotification": TOOL_CALL_UPDATE,
}


def _read(variant: str, name: str, value: Any) -> Any:
    return TypeAdapter(getattr(models(variant), name)).validate_json(json.dumps(value))


@pytest.mark.parametrize("variant", ["stable", "unstable"])
@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_parse_then_dump_is_the_message(variant: str, name: str) -> None:
    message = MESSAGES[name]
    read = _read(variant, name, message)
    assert json.loads(read.model_dump_json()) == message
    assert read.model_dump(mode="json") == message


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_default_branch_keeps_the_members_of_an_unknown_kind(variant: str) -> None:
    bindings = models(variant)
    read = _read(variant, "InitializeResponse", INITIALIZE_RESULT)
    env_var = read.auth_methods[1]
    assert type(env_var) is bindings.AuthMethodAgent  # typed access is unchanged
    assert (env_var.id_, env_var.name) == ("openai-api-key", "Use OPENAI_API_KEY")
    assert env_var.model_extra == {"type": "env_var", "vars": ENV_VAR_METHOD["vars"]}
    alone = TypeAdapter(bindings.AuthMethod).validate_python(copy.deepcopy(ENV_VAR_METHOD))
    assert type(alone) is bindings.AuthMethodAgent and alone.model_dump(mode="json") == ENV_VAR_METHOD


@pytest.mark.parametrize("variant", ["stable", "unstable"])
def test_unknown_members_are_the_models_extra(variant: str) -> None:
    session = _read(variant, "NewSessionResponse", NEW_SESSION_RESULT)
    assert session.session_id == NEW_SESSION_RESULT["sessionId"]
    assert session.model_extra == {"models": NEW_SESSION_RESULT["models"]}
    update = _read(variant, "SessionNotification", TOOL_CALL_UPDATE).update
    assert update.model_extra == {"terminal_info": {"terminal_id": "t1"}}
    text = update.content[0].content
    assert text.text == "ok" and text.model_extra == {"vendorHint": {"fold": True}}


def test_a_model_built_in_python_dumps_only_what_was_given() -> None:
    bindings = models("stable")
    built = bindings.NewSessionResponse(session_id="s1", models={"currentModelId": "m"})
    assert built.model_dump(mode="json") == {"sessionId": "s1", "models": {"currentModelId": "m"}}
    assert isinstance(built, BaseModel) and bindings.NewSessionResponse(session_id="s1").model_extra == {}
