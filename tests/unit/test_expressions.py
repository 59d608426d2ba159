"""The Python expressions the generator hands the model templates are values, never pasted text:
names are checked identifiers, literals are written through repr."""

from __future__ import annotations

import ast

import pytest

from acpgen.render.expressions import Annotated, Call, Lambda, Name, names, source


def test_expressions_write_valid_python_with_literals_through_repr() -> None:
    router = Call("TagRouter", ("type", "type_", ("a", "b")), (("default", None), ("other", "<other>")))
    annotated = Annotated(
        members=(Annotated(members=(Name("A"),), metadata=(Call("Tag", ("a",)),)), Name("B")),
        metadata=(Call("Discriminator", (router,)),),
    )
    text = str(annotated)
    assert text == (
        "Annotated[Annotated[A, Tag('a')] | B, "
        "Discriminator(TagRouter('type', 'type_', ('a', 'b'), default=None, other='<other>'))]"
    )
    ast.parse(text, mode="eval")
    factory = Call("Field", keywords=(("default_factory", Lambda(Call("Plan.model_validate", ({"x": [1, "y"]},)))),))
    assert str(factory) == "Field(default_factory=lambda: Plan.model_validate({'x': [1, 'y']}))"
    assert source(("one",)) == "('one',)" and source('quote " and \\ slash') == repr('quote " and \\ slash')
    assert names(annotated) == {"Annotated", "A", "B", "Tag", "Discriminator", "TagRouter"} - {"Annotated"}


@pytest.mark.parametrize("bad", ["not a name", "class", "x.1", "a;b", ""])
def test_a_name_that_is_not_an_identifier_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a Python name"):
        Call(bad)
    with pytest.raises(ValueError, match="not a Python name"):
        Name(bad)


def test_only_plain_data_is_a_literal() -> None:
    with pytest.raises(TypeError, match="no Python literal"):
        source(object())
