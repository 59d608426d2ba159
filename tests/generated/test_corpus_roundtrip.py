"""Realistic ACP messages read into the models and dump back to the same JSON (through the adapter,
and through a model's own ``model_dump``/``model_dump_json`` with no argument)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from tests.support.bindings import CorpusMessage, corpus, read, wire

STABLE = corpus("stable")
UNSTABLE = corpus("unstable")


def test_corpus_is_substantial() -> None:
    assert len(STABLE) >= 60 and len(UNSTABLE) >= 30


@pytest.mark.parametrize("variant", ["stable", "unstable"])
@pytest.mark.parametrize("msg", STABLE, ids=lambda m: m.name)
def test_stable_message_round_trips(msg: CorpusMessage, variant: str) -> None:
    obj = read(variant, msg.def_name, msg.payload)
    assert wire(variant, msg.def_name, obj) == msg.payload
    if isinstance(obj, BaseModel):  # a model's own dump, with no argument
        assert obj.model_dump(mode="json") == msg.payload


@pytest.mark.parametrize("msg", UNSTABLE, ids=lambda m: m.name)
def test_unstable_message_round_trips_in_unstable_build(msg: CorpusMessage) -> None:
    obj = read("unstable", msg.def_name, msg.payload)
    assert wire("unstable", msg.def_name, obj) == msg.payload
    if isinstance(obj, BaseModel):  # a model's own dump, with no argument
        assert json.loads(obj.model_dump_json()) == msg.payload


@pytest.mark.parametrize("msg", STABLE[:20], ids=lambda m: m.name)
def test_json_bytes_round_trip(msg: CorpusMessage) -> None:
    from tests.support.bindings import adapter

    ta = adapter("stable", msg.def_name)
    obj = ta.validate_json(json.dumps(msg.payload))
    assert json.loads(ta.dump_json(obj, by_alias=True, exclude_unset=True)) == msg.payload
