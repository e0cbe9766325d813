"""Schemas from type hints: a plain typed function's input model and its JSON Schemas, via pydantic.

The input model has one field per parameter (defaults kept, unknown arguments refused); the
output schema is that of the return annotation in serialization mode. `"default": null` entries
are dropped: they say nothing a validator uses, and a card's TOML form cannot hold a null.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

__all__ = ["FunctionSignature", "signature_of", "without_null_defaults"]


class FunctionSignature:
    """What the organ runtime needs of a function: its input model, schemas and injected parameters."""

    def __init__(
        self,
        model: type[BaseModel],
        output: TypeAdapter[Any] | None,
        context_parameters: tuple[str, ...],
    ) -> None:
        self.model = model
        self.output = output
        self.context_parameters = context_parameters

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = without_null_defaults(self.model.model_json_schema())
        return schema

    def output_schema(self) -> dict[str, Any] | None:
        if self.output is None:
            return None
        schema: dict[str, Any] = without_null_defaults(self.output.json_schema(mode="serialization"))
        return schema

    def dump(self, value: Any) -> Any:
        """The function's result as JSON-ready data."""
        if self.output is None:
            return TypeAdapter(Any).dump_python(value, mode="json")
        return self.output.dump_python(value, mode="json")


def signature_of(function: Callable[..., Any], context_type: type[Any], model_name: str) -> FunctionSignature:
    """Read a function's parameters and return annotation; every parameter must be annotated.

    Parameters annotated with `context_type` are filled by the runtime, not by the caller.
    """
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    injected: list[str] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(
                f"{function.__qualname__}: *args and **kwargs cannot be described; name each input"
            )
        if name not in hints:
            raise TypeError(f"{function.__qualname__}: parameter {name!r} has no type hint; annotate it")
        if hints[name] is context_type:
            injected.append(name)
            continue
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (hints[name], default)
    model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    returns = hints.get("return")
    output = TypeAdapter(returns) if returns is not None and returns is not type(None) else None
    return FunctionSignature(model, output, tuple(injected))


def without_null_defaults(schema: Any) -> Any:
    """A copy of a schema without `"default": null` anywhere."""
    if isinstance(schema, dict):
        return {k: without_null_defaults(v) for k, v in schema.items() if not (k == "default" and v is None)}
    if isinstance(schema, list):
        return [without_null_defaults(item) for item in schema]
    return schema
