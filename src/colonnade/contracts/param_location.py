"""Where each argument of an operation goes on the HTTP request.

Decided by the `x-in` keyword on its property in the input schema (`path`, `query`, `header`,
`body`, or `raw-body` for a body that is the argument itself); without it, `{param}`s of the path
go to the path, and the rest go to the query string for GET/HEAD/DELETE/OPTIONS and to the body
otherwise. `x-name` gives the name on the wire when it differs from the property name (e.g.
header `X-Request-Id`). How the body is encoded is the endpoint's `body_media_type` (JSON, form
fields or multipart parts); a body property that is a string with `contentEncoding: base64` is a
file in a multipart body (`file_media_type`: its `contentMediaType`, else
application/octet-stream). Shared by the validator, the catalog's HTTP binding and the OpenAPI
import and export, so all four agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from colonnade.contracts.model import Operation, path_parameters

__all__ = [
    "BODYLESS_METHODS",
    "DEFAULT_FILE_MEDIA_TYPE",
    "ParamLocation",
    "ParamSpec",
    "file_media_type",
    "placements",
]

BODYLESS_METHODS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
DEFAULT_FILE_MEDIA_TYPE = "application/octet-stream"


class ParamLocation(StrEnum):
    PATH = "path"
    QUERY = "query"
    HEADER = "header"
    BODY = "body"
    RAW_BODY = "raw-body"


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One argument: its property name, where it goes, its name on the wire, and whether it is a file.

    `file_media_type` is set for a base64 string (`contentEncoding: base64`): a multipart body sends
    its decoded bytes as a file part of that media type.
    """

    name: str
    location: ParamLocation
    wire_name: str
    file_media_type: str | None = None


def file_media_type(schema: object) -> str | None:
    """The media type of a property that carries a file (or an array of files) as base64 text.

    None for any other property.
    """
    if isinstance(schema, dict) and schema.get("type") == "array":
        schema = schema.get("items")
    if not isinstance(schema, dict) or schema.get("contentEncoding") != "base64":
        return None
    media = schema.get("contentMediaType")
    return media if isinstance(media, str) and media else DEFAULT_FILE_MEDIA_TYPE


def placements(operation: Operation) -> tuple[ParamSpec, ...]:
    """Every property of the operation's input schema, placed on the request."""
    schema = operation.endpoint.effective_input_schema()
    properties = schema.get("properties") or {}
    in_path = set(path_parameters(operation.endpoint.path))
    default = ParamLocation.QUERY if operation.method in BODYLESS_METHODS else ParamLocation.BODY
    params: list[ParamSpec] = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        declared = prop.get("x-in")
        if declared is not None:
            location = ParamLocation(declared)
        elif name in in_path:
            location = ParamLocation.PATH
        else:
            location = default
        params.append(ParamSpec(name, location, str(prop.get("x-name", name)), file_media_type(prop)))
    return tuple(params)
