"""The two readers of the differential test: our generated models, and the TypeScript SDK's zod schemas.

Ours reads each case's JSON text with ``TypeAdapter(T).validate_json`` (the wire path) and, as a
check, ``validate_python`` of the parsed JSON (the path the dispatcher takes): the two must agree.
The SDK reads every case in one batch, in one node process (``tests/interop/zod_read.mjs``).
"""

from __future__ import annotations

import json
import subprocess
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tests.support import bindings
from tests.support.sdk import INTEROP, node

SDK_READER = INTEROP / "zod_read.mjs"
TIMEOUT = 300


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reader made of one JSON text."""

    accepted: bool
    value: Any = None
    """The value read, as JSON data with every field (defaults included), when accepted."""
    detail: str = ""
    """Why it was refused, or what went wrong when ``crashed``."""
    crashed: bool = False
    """The reader raised something other than a validation error (never acceptable)."""
    wire: str | None = None
    """Ours: the JSON text the value dumps to (``model_dump_json()`` of a model, with no argument)."""
    unknown: tuple[tuple[str | int, ...], ...] = ()
    """Ours: where ``value`` holds members the schema does not name (kept on a model, its ``model_extra``)."""


@cache
def adapter(build: str, type_name: str) -> TypeAdapter[Any]:
    if type_name not in bindings.schema(build)["$defs"]:  # a top-level message union, by its own name
        return TypeAdapter(getattr(bindings.models(build), type_name))
    return bindings.adapter(build, type_name)


def read_ours(build: str, type_name: str, text: str) -> Reading:
    """Our models' reading of ``text`` as the type ``type_name`` of ``build``."""
    reader = adapter(build, type_name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a serializer warning is a defect too
            try:
                value = reader.validate_json(text)
            except ValidationError as error:
                return _refused(reader, text, error)
            again = reader.validate_python(json.loads(text))
            if full(again) != full(value):
                return Reading(False, detail="validate_json and validate_python read different values", crashed=True)
            return Reading(True, value=full(value), wire=_dump(reader, value), unknown=tuple(unknown_members(value)))
    except Exception as error:  # noqa: BLE001 - anything but a validation error is a crash of our reader
        return Reading(False, detail=f"{type(error).__name__}: {error}", crashed=True)


def _refused(reader: TypeAdapter[Any], text: str, error: ValidationError) -> Reading:
    try:
        reader.validate_python(json.loads(text))
    except ValidationError:
        first = error.errors()[0]
        return Reading(False, detail=f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
    return Reading(False, detail="validate_json refuses what validate_python accepts", crashed=True)


def _dump(reader: TypeAdapter[Any], value: Any) -> str:
    """The wire a user gets: ``model_dump_json()`` with no argument for a model (checked against
    ``model_dump(mode="json")``), else the adapter's dump by alias of what was set."""
    if isinstance(value, BaseModel):
        text = value.model_dump_json()
        if json.loads(text) != value.model_dump(mode="json"):
            raise AssertionError("model_dump_json() and model_dump(mode='json') write different JSON")
        return text
    return reader.dump_json(value, by_alias=True, exclude_unset=True).decode()


def full(value: Any) -> Any:
    """A value read by our models as JSON data, every field included (the reading, not the wire)."""
    if isinstance(value, BaseModel):
        out = {field.alias or name: full(getattr(value, name)) for name, field in type(value).model_fields.items()}
        out.update({key: full(item) for key, item in (value.__pydantic_extra__ or {}).items()})
        return out
    if isinstance(value, list):
        return [full(item) for item in value]
    if isinstance(value, dict):
        return {key: full(item) for key, item in value.items()}
    return value


def unknown_members(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The paths (in :func:`full`'s value) of the members our models keep without naming them."""
    if isinstance(value, BaseModel):
        found = [(*path, key) for key in value.__pydantic_extra__ or {}]
        for name, field in type(value).model_fields.items():
            found += unknown_members(getattr(value, name), (*path, field.alias or name))
        return found
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in unknown_members(item, (*path, index))]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in unknown_members(item, (*path, key))]
    return []


def read_sdk(cases: Sequence[tuple[str, str, str]]) -> list[Reading]:
    """The SDK's reading of every ``(build, type_name, text)``, in one node process."""
    done = subprocess.run(
        [node(), str(SDK_READER)],
        input=json.dumps({"cases": list(cases)}),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=INTEROP,
    )
    if done.returncode != 0:
        raise AssertionError(f"{SDK_READER.name} failed (exit {done.returncode}):\n{done.stderr}")
    outcomes = json.loads(done.stdout)
    assert len(outcomes) == len(cases), f"{SDK_READER.name} answered {len(outcomes)} of {len(cases)} cases"
    return [_sdk_reading(status, detail) for status, detail in outcomes]


def _sdk_reading(status: str, detail: str) -> Reading:
    if status == "ok":
        return Reading(True, value=json.loads(detail))
    return Reading(False, detail=detail, crashed=status == "crashed")
