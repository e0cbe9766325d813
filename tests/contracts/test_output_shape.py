"""MCP results are objects: which output schemas are listed as is, wrapped as {"result": ...}, or not."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from colonnade.contracts.output_shape import OutputShape, mcp_output_schema, output_shape, wrap_result

PET = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}


@pytest.mark.parametrize(
    ("schema", "shape"),
    [
        (PET, OutputShape.OBJECT),
        ({"type": ["object"]}, OutputShape.OBJECT),
        ({"$ref": "#/$defs/Pet", "$defs": {"Pet": PET}}, OutputShape.OBJECT),
        (
            {"allOf": [{"$ref": "#/$defs/Pet"}, {"required": ["id"]}], "$defs": {"Pet": PET}},
            OutputShape.OBJECT,
        ),
        ({"oneOf": [PET, {"type": "object"}]}, OutputShape.OBJECT),
        ({"const": {"ok": True}}, OutputShape.OBJECT),
        ({"type": "array", "items": PET}, OutputShape.OTHER),  # petstore's findPetsByStatus
        ({"type": "string"}, OutputShape.OTHER),  # petstore's loginUser
        ({"type": ["array", "null"]}, OutputShape.OTHER),
        ({"enum": ["a", "b"]}, OutputShape.OTHER),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, OutputShape.OTHER),
        ({"type": ["object", "null"]}, OutputShape.MIXED),
        ({"properties": {"id": {"type": "string"}}}, OutputShape.MIXED),
        ({}, OutputShape.MIXED),
        ({"anyOf": [PET, {"type": "array"}]}, OutputShape.MIXED),
        ({"type": "object", "allOf": [{"type": "string"}]}, OutputShape.MIXED),  # admits nothing
        ({"$ref": "#/$defs/Node", "$defs": {"Node": {"$ref": "#/$defs/Node"}}}, OutputShape.MIXED),
    ],
)
def test_shapes(schema: dict[str, Any], shape: OutputShape) -> None:
    assert output_shape(schema) is shape


def test_an_object_schema_is_listed_as_is_with_an_explicit_object_root() -> None:
    schema = {"$ref": "#/$defs/Pet", "$defs": {"Pet": PET}}
    listed = mcp_output_schema(schema)
    assert listed == {**schema, "type": "object"}
    assert schema == {"$ref": "#/$defs/Pet", "$defs": {"Pet": PET}}  # not changed in place


def test_a_non_object_schema_is_wrapped_with_its_defs_at_the_root() -> None:
    schema = {"type": "array", "items": {"$ref": "#/$defs/Pet"}, "$defs": {"Pet": PET}}
    listed = mcp_output_schema(schema)
    assert listed == {
        "$defs": {"Pet": PET},
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}},
        "required": ["result"],
        "additionalProperties": False,
    }
    assert listed is not None
    jsonschema.validate(wrap_result([{"id": 1}, {"id": 2}]), listed)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrap_result([{"name": "no id"}]), listed)


def test_a_recursive_non_object_schema_keeps_pointing_at_itself_once_wrapped() -> None:
    tree = {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}}
    listed = mcp_output_schema(tree)
    assert listed is not None
    assert listed["properties"]["result"]["items"]["anyOf"][1] == {"$ref": "#/properties/result"}
    jsonschema.validate(wrap_result([1, [2, [3]]]), listed)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrap_result([1, ["x"]]), listed)


@pytest.mark.parametrize("schema", [None, {"type": ["object", "null"]}, {}])
def test_no_schema_is_listed_when_the_shape_is_unknown(schema: dict[str, Any] | None) -> None:
    assert mcp_output_schema(schema) is None


@pytest.mark.parametrize(
    ("output", "structured"),
    [
        ({"id": 1}, {"id": 1}),
        ([1, 2], {"result": [1, 2]}),
        ("logged in user session:1", {"result": "logged in user session:1"}),
        (None, {"result": None}),
        ({"result": 5}, {"result": 5}),
    ],
)
def test_results_are_wrapped_value_by_value(output: Any, structured: dict[str, Any]) -> None:
    assert wrap_result(output) == structured
