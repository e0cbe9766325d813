"""Read contract documents (YAML or JSON) from disk, keeping enough to point at lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from colonnade.errors import ColonnadeError, not_utf8_position

__all__ = ["ContractLoadError", "Document", "load_document", "parse_text"]


class ContractLoadError(ColonnadeError):
    """The file cannot be read or parsed; carries the position of a syntax error when known."""

    code = "C-CONTRACT-LOAD"

    def __init__(
        self,
        path: str,
        message: str,
        line: int | None = None,
        column: int | None = None,
        *,
        fix: str | None = None,
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.column = column
        self.fix = fix
        where = f"{path}:{line}:{column}" if line is not None else path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Document:
    """A parsed document plus a map from JSON pointers to 1-based (line, column)."""

    path: str
    data: Any
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def position(self, pointer: str) -> tuple[int, int] | None:
        """Position of the pointer, or of its nearest ancestor that has one."""
        current = pointer
        while True:
            if current in self.positions:
                return self.positions[current]
            if not current:
                return None
            current = current.rsplit("/", 1)[0]


def load_document(path: str | Path) -> Document:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContractLoadError(str(path), "file not found") from None
    except IsADirectoryError:
        raise ContractLoadError(str(path), "is a directory, expected a .yaml/.yml/.json file") from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(p, exc) from None
    except OSError as exc:
        raise ContractLoadError(str(path), f"cannot read file: {exc}") from None
    return parse_text(text, str(path))


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> ContractLoadError:
    """Where the first byte that is not UTF-8 sits, and how to convert the file."""
    line, column, byte = not_utf8_position(exc)
    return ContractLoadError(
        str(path),
        f"is not UTF-8 text (byte 0x{byte} at line {line}, column {column}): save it as UTF-8",
        line,
        column,
        fix=f"save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 {path.name} > utf8.yaml`); "
        "contracts are read as UTF-8 only",
    )


def parse_text(text: str, path: str = "<string>") -> Document:
    """Parse YAML (a superset of JSON); JSON files get JSON's stricter parser for exact errors."""
    if path.endswith(".json"):
        try:
            return Document(path, json.loads(text))
        except json.JSONDecodeError as exc:
            raise ContractLoadError(path, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise ContractLoadError(path, f"invalid YAML: {problem}", line, col) from None
    except yaml.YAMLError as exc:
        raise ContractLoadError(path, f"invalid YAML: {exc}") from None
    positions: dict[str, tuple[int, int]] = {}
    if node is not None:
        _index(node, "", positions)
    return Document(path, data, positions)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _index(node: yaml.Node, pointer: str, out: dict[str, tuple[int, int]]) -> None:
    out[pointer] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _index(value, f"{pointer}/{_escape(str(key.value))}", out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, f"{pointer}/{i}", out)
