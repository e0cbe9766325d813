"""Local $ref resolution and the OpenAPI -> JSON Schema 2020-12 rewrite."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.refs import RefResolver
from colonnade.contracts.openapi.schema_conversion import SchemaConverter, without_flagged


def _doc(**schemas: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "components": {"schemas": schemas}}


def _convert(doc: dict[str, Any], schema: Any) -> tuple[Any, dict[str, Any]]:
    scope = SchemaConverter(RefResolver(doc)).scope()
    converted = scope.convert(schema, "/test")
    return converted, scope.defs()


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_nested_refs_are_inlined() -> None:
    doc = _doc(
        Order={"type": "object", "properties": {"pet": _ref("Pet"), "qty": {"type": "integer"}}},
        Pet={"type": "object", "properties": {"category": _ref("Category")}},
        Category={"type": "string", "enum": ["dog", "cat"]},
    )
    schema, defs = _convert(doc, _ref("Order"))
    assert defs == {}
    assert schema == {
        "type": "object",
        "properties": {
            "pet": {"type": "object", "properties": {"category": {"type": "string", "enum": ["dog", "cat"]}}},
            "qty": {"type": "integer"},
        },
    }


def test_refs_in_other_component_sections_and_escaped_pointers_resolve() -> None:
    doc = {
        "paths": {"/a/{id}": {"x": {"type": "integer"}}},
        "components": {"schemas": {"a b": {"type": "null"}}},
    }
    assert _convert(doc, {"$ref": "#/paths/~1a~1%7Bid%7D/x"})[0] == {"type": "integer"}
    assert _convert(doc, {"$ref": "#/components/schemas/a%20b"})[0] == {"type": "null"}


def test_a_self_recursive_schema_becomes_a_defs_reference() -> None:
    doc = _doc(Node={"type": "object", "properties": {"children": {"type": "array", "items": _ref("Node")}}})
    schema, defs = _convert(doc, _ref("Node"))
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert defs == {"Node": schema}
    complete = {**schema, "$defs": defs}
    jsonschema.Draft202012Validator.check_schema(complete)
    validator = jsonschema.Draft202012Validator(complete)
    assert validator.is_valid({"children": [{"children": []}, {"children": [{"children": []}]}]})
    assert not validator.is_valid({"children": [{"children": [{"children": 7}]}]})


def test_mutual_recursion_collects_every_def_it_needs() -> None:
    doc = _doc(
        Thread={"type": "object", "properties": {"comments": {"type": "array", "items": _ref("Comment")}}},
        Comment={"type": "object", "properties": {"thread": _ref("Thread"), "text": {"type": "string"}}},
    )
    schema, defs = _convert(doc, _ref("Comment"))
    assert set(defs) == {"Comment"}
    assert schema["properties"]["thread"]["properties"]["comments"]["items"] == {"$ref": "#/$defs/Comment"}
    validator = jsonschema.Draft202012Validator({**schema, "$defs": defs})
    assert validator.is_valid({"text": "a", "thread": {"comments": [{"text": "b"}]}})
    assert not validator.is_valid({"thread": {"comments": [{"text": 1}]}})


def test_a_ref_chain_looping_on_itself_is_an_error() -> None:
    doc = _doc(A=_ref("B"), B=_ref("A"))
    with pytest.raises(OpenApiError) as caught:
        _convert(doc, {"type": "object", "properties": {"a": _ref("A")}})
    assert "cycle with nothing in between" in caught.value.message
    assert "/components/schemas/A -> /components/schemas/B -> /components/schemas/A" in caught.value.message


def test_a_missing_target_names_the_missing_part_and_where_the_ref_is() -> None:
    doc = _doc(Pet={"type": "object"})
    with pytest.raises(OpenApiError) as caught:
        _convert(doc, {"properties": {"owner": _ref("Owner")}})
    assert caught.value.message == (
        "$ref '#/components/schemas/Owner' does not resolve: nothing at /components/schemas/Owner"
    )
    assert caught.value.pointer == "/test/properties/owner/$ref"


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("other.yaml#/components/schemas/Pet", "points outside this document"),
        ("https://example.com/schemas/pet.json", "points outside this document"),
        ("#components/schemas/Pet", "is not a JSON pointer"),
    ],
)
def test_non_local_or_malformed_refs_are_errors_with_a_hint(ref: str, fragment: str) -> None:
    with pytest.raises(OpenApiError) as caught:
        _convert(_doc(), {"$ref": ref})
    assert fragment in caught.value.message
    assert caught.value.hint


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "nullable": True}, {"type": ["string", "null"]}),
        ({"type": "string", "nullable": False}, {"type": "string"}),
        (
            {"type": "string", "enum": ["a", "b"], "nullable": True},
            {"type": ["string", "null"], "enum": ["a", "b", None]},
        ),
        (
            {"allOf": [{"type": "integer"}], "nullable": True},
            {"anyOf": [{"allOf": [{"type": "integer"}]}, {"type": "null"}]},
        ),
        ({"type": ["integer", "null"]}, {"type": ["integer", "null"]}),
        ({"minimum": 0, "exclusiveMinimum": True}, {"exclusiveMinimum": 0}),
        ({"maximum": 9, "exclusiveMaximum": False}, {"maximum": 9}),
        ({"exclusiveMinimum": 0}, {"exclusiveMinimum": 0}),
        ({"type": "string", "example": "rex"}, {"type": "string", "examples": ["rex"]}),
        ({"type": "object", "xml": {"name": "pet"}, "externalDocs": {"url": "x"}}, {"type": "object"}),
    ],
)
def test_openapi_30_spellings_become_2020_12(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert _convert(_doc(), schema)[0] == expected
    jsonschema.Draft202012Validator.check_schema(expected)


def test_rewrites_reach_nested_subschemas_but_not_literal_data() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "nullable": True}},
            "default": {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
        },
        "default": {"nullable": True, "$ref": "not a ref"},
        "enum": [{"example": 1}],
    }
    converted, _ = _convert(_doc(), schema)
    assert converted["properties"]["tags"]["items"] == {"type": ["string", "null"]}
    assert converted["properties"]["default"] == {"type": "integer", "exclusiveMinimum": 1}
    assert converted["default"] == {"nullable": True, "$ref": "not a ref"}
    assert converted["enum"] == [{"example": 1}]


def test_ref_siblings_annotate_the_target_or_join_it_with_all_of() -> None:
    doc = _doc(Name={"type": "string", "minLength": 1})
    annotated, _ = _convert(doc, {**_ref("Name"), "description": "Full name", "nullable": True})
    assert annotated == {"type": ["string", "null"], "minLength": 1, "description": "Full name"}
    constrained, _ = _convert(doc, {**_ref("Name"), "maxLength": 5, "summary": "ignored"})
    assert constrained == {"allOf": [{"type": "string", "minLength": 1}], "maxLength": 5}


def test_converted_shared_schemas_are_independent_copies() -> None:
    doc = _doc(Pet={"type": "object", "properties": {"name": {"type": "string"}}})
    converter = SchemaConverter(RefResolver(doc))
    first = converter.scope().convert(_ref("Pet"), "/a")
    first["properties"]["name"]["type"] = "integer"
    second = converter.scope().convert(_ref("Pet"), "/b")
    assert second["properties"]["name"] == {"type": "string"}


def test_without_flagged_drops_flagged_properties_at_any_depth() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "owner": {
                "type": "object",
                "properties": {"id": {"readOnly": True}, "name": {"type": "string"}},
                "required": ["id"],
            },
            "items": {"type": "array", "items": {"properties": {"sku": {"readOnly": True}, "n": {}}}},
        },
        "required": ["id", "owner"],
    }
    out = without_flagged(schema, "readOnly")
    assert list(out["properties"]) == ["owner", "items"]
    assert out["required"] == ["owner"]
    assert out["properties"]["owner"] == {"type": "object", "properties": {"name": {"type": "string"}}}
    assert out["properties"]["items"]["items"] == {"properties": {"n": {}}}
    assert schema["properties"]["id"] == {"type": "integer", "readOnly": True}
