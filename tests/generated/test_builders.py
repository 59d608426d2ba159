"""Builders (issue 15): one per tagged union variant, derived from the schema, each building the
same model the wire would read. Checked against every variant instance in the test and bench
corpora: rebuilt from its own field values, it dumps to the same wire JSON."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support.bindings import corpus, read, wire
from tests.generated.test_front_door import _python
from tests.generated.test_stubs import module, protocol

VARIANTS = ("stable", "unstable")


def _built_classes(variant: str) -> set[str]:
    """Every union variant (the catch-alls of open unions aside), every method's params and result."""
    names: set[str] = set()
    for t in protocol(variant).types:
        if t.kind == "union":
            for v in t.variants:
                if not v.catch_all:
                    names.update([cls for _, cls, _ in v.spread] or [v.class_name])
    for m in protocol(variant).methods:
        names.update(protocol(variant).type(t).class_name for t in (m.params, m.result) if t is not None)
    return names


def _function_for(variant: str) -> dict[type, Any]:
    builders, models = module(variant, "builders"), module(variant, "models")
    found = {}
    for name in builders.__all__:
        function = getattr(builders, name)
        if not inspect.isfunction(function):
            continue  # UNSET and its type
        found[getattr(models, inspect.signature(function).return_annotation.removeprefix("models."))] = function
    return found


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_and_params_class_has_a_builder_named_after_it(variant: str) -> None:
    models, builders = module(variant, "models"), module(variant, "builders")
    functions = _function_for(variant)
    classes = {c.__name__ for c in functions}
    assert classes == {c for c in _built_classes(variant) if isinstance(getattr(models, c, None), type)}
    assert len(classes) >= 80
    assert all(getattr(builders, f.__name__) is f and f.__name__ == _snake(c.__name__) for c, f in functions.items())


def _snake(name: str) -> str:
    from acpgen.ir.naming import snake

    return snake(name)


def _instances(value: Any) -> Iterator[BaseModel]:
    if isinstance(value, BaseModel):
        yield value
        for name in type(value).model_fields:
            yield from _instances(getattr(value, name))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _instances(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _instances(item)


def _rebuilt(function: Any, instance: BaseModel) -> BaseModel:
    positional, keywords = _arguments(function, instance)
    return function(*positional, **keywords)  # type: ignore[no-any-return]


@pytest.mark.parametrize("variant", VARIANTS)
def test_builders_rebuild_every_variant_instance_of_the_corpora(variant: str) -> None:
    functions = _function_for(variant)
    sources = corpus("stable") + (corpus("unstable") if variant == "unstable" else [])
    messages = [(m.def_name, m.payload) for m in sources]
    exercised: set[type] = set()
    for def_name, payload in messages:
        for instance in _instances(read(variant, def_name, payload)):
            function = functions.get(type(instance))
            if function is None:
                continue
            rebuilt = _rebuilt(function, instance)
            assert type(rebuilt) is type(instance)
            assert rebuilt.model_dump(mode="json", by_alias=True, exclude_unset=True) == instance.model_dump(
                mode="json", by_alias=True, exclude_unset=True
            )
            exercised.add(type(instance))
    assert len(exercised) >= 25, sorted(c.__name__ for c in exercised)


def _arguments(function: Any, instance: BaseModel) -> tuple[list[Any], dict[str, Any]]:
    params = inspect.signature(function).parameters.values()
    positional = [getattr(instance, p.name) for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {
        p.name: getattr(instance, p.name)
        for p in params
        if p.kind is p.KEYWORD_ONLY and p.name in instance.model_fields_set
    }
    return positional, keywords


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_builder_builds_what_its_class_constructor_builds(variant: str) -> None:
    """The builders call each class's validator straight, as its ``__init__`` does: the instance
    (values, fields set, extras) and the errors must be the constructor's, for every class a
    builder makes (none defines an ``__init__`` or post-init step of its own the builders
    would skip)."""
    functions = _function_for(variant)
    for cls in functions:
        assert cls.__init__ is BaseModel.__init__ and not cls.__pydantic_custom_init__, cls.__name__
        assert not cls.__pydantic_post_init__, cls.__name__
    sources = corpus("stable") + (corpus("unstable") if variant == "unstable" else [])
    compared: set[type] = set()
    for m in sources:
        for instance in _instances(read(variant, m.def_name, m.payload)):
            function = functions.get(type(instance))
            if function is None:
                continue
            positional, keywords = _arguments(function, instance)
            built = function(*positional, **keywords)
            names = [p.name for p in inspect.signature(function).parameters.values()]
            tag = {
                name: getattr(instance, name)
                for name in type(instance).model_fields
                if name not in names and name in instance.model_fields_set
            }
            constructed = type(instance)(**dict(zip(names, positional, strict=False)), **keywords, **tag)
            assert built.__dict__ == constructed.__dict__
            assert built.model_fields_set == constructed.model_fields_set
            assert built.__pydantic_extra__ == constructed.__pydantic_extra__
            compared.add(type(instance))
    assert len(compared) >= 25


def test_a_builder_refuses_what_its_class_constructor_refuses() -> None:
    from pydantic import ValidationError

    builders, models = module("stable", "builders"), module("stable", "models")
    with pytest.raises(ValidationError) as by_builder:
        builders.session_notification(5, builders.text_content_block("not an update"), meta=[1])
    with pytest.raises(ValidationError) as by_constructor:
        models.SessionNotification(session_id=5, update=builders.text_content_block("not an update"), meta=[1])
    assert by_builder.value.title == by_constructor.value.title == "SessionNotification"
    assert by_builder.value.errors() == by_constructor.value.errors()
    assert len(by_builder.value.errors()) >= 2


def test_a_builder_is_the_first_use_of_its_class_in_a_fresh_process() -> None:
    """The models defer building their validators to first use: a builder called first, from a
    module's top level, builds its class's validator as the constructor would."""
    code = (
        "from acp_bindings import builders\n"
        "n = builders.session_notification('s', builders.agent_message_chunk_session_update("
        "builders.text_content_block('hi')), meta={'k': 1})\n"
        "print(n.model_dump_json(by_alias=True, exclude_unset=True))\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        '{"sessionId":"s","update":{"content":{"text":"hi","type":"text"},'
        '"sessionUpdate":"agent_message_chunk"},"_meta":{"k":1}}'
    )


def test_a_builder_sets_the_tag_and_leaves_out_what_was_not_given() -> None:
    builders, models = module("stable", "builders"), module("stable", "models")
    update = builders.agent_message_chunk_session_update(builders.text_content_block("Hello"))
    notification = models.SessionNotification(session_id="s", update=update)
    assert wire("stable", "SessionNotification", notification) == {
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello"}},
    }
    call = builders.tool_call_session_update("call-1", "Read notes", kind="read", status="pending")
    assert wire("stable", "SessionUpdate", call) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call-1",
        "title": "Read notes",
        "kind": "read",
        "status": "pending",
    }


def _sequence_params_not_passed_as_lists(source: str) -> list[str]:
    """Every builder parameter typed as a ``Sequence`` that the builder hands on unconverted."""
    import ast

    wrong = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        body = ast.unparse(node)
        for arg in node.args.args + node.args.kwonlyargs:
            sequence = arg.annotation is not None and "Sequence[" in ast.unparse(arg.annotation)
            if sequence and f"_as_list({arg.arg})" not in body:
                wrong.append(f"{node.name}({arg.arg})")
    return wrong


def test_every_sequence_parameter_is_handed_on_as_a_list() -> None:
    """A field shared by two models through a common base is a list in both builders: reading the
    first builder's annotation must not change the second's (it did: the v2 unstable
    ``initialize_proxy_response(auth_methods=...)`` passed a tuple on unconverted)."""
    from tests.support.bindings import ROOT

    packages = sorted((ROOT / "generated").glob("*/builders.py"))
    assert len(packages) == 4
    wrong = {p.parent.name: _sequence_params_not_passed_as_lists(p.read_text()) for p in packages}
    assert wrong == {p.parent.name: [] for p in packages}
