"""Cards on disk: `organ.json` and `organ.toml` in one folder per organ, holding the same data.

JSON is what tools read; TOML is what people review. Both are written from one dump of the card,
so they cannot drift apart unless edited by hand (which `colonnade cards validate` reports).
TOML has no null: a card holding one (a schema's `const: null`, say) cannot be exported, and the
error says where it is.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tomli_w

from colonnade.organs.card import OrganCard
from colonnade.organs.organ_errors import OrganCardError

__all__ = ["JSON_FILE", "TOML_FILE", "card_folders", "read_card_data", "write_cards"]

JSON_FILE = "organ.json"
TOML_FILE = "organ.toml"


def write_cards(card: OrganCard, folder: Path) -> list[Path]:
    """Write the card as organ.json and organ.toml into `folder` (created if needed)."""
    data = card.to_data()
    null = _first_null(data, "")
    if null is not None:
        raise OrganCardError(
            f"organ '{card.name}': the card holds a null at {null or '/'}, which TOML cannot store; "
            "drop the null (a JSON Schema can say `type: null` instead of `const: null`)"
        )
    folder.mkdir(parents=True, exist_ok=True)
    json_path, toml_path = folder / JSON_FILE, folder / TOML_FILE
    json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    toml_path.write_text(tomli_w.dumps(data, multiline_strings=True), encoding="utf-8")
    return [json_path, toml_path]


def read_card_data(path: Path) -> dict[str, Any]:
    """The raw data of one card file (JSON or TOML by suffix); OrganCardError says what is wrong where."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OrganCardError(f"{path}: cannot read the card: {exc}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OrganCardError(f"{path}: invalid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise OrganCardError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise OrganCardError(f"{path}: a card is an object (a table), not {type(data).__name__}")
    return data


def card_folders(paths: Iterable[Path]) -> list[Path]:
    """Folders holding a card: each path itself, or (for a folder of folders) its sub-folders, sorted."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise OrganCardError(f"{path}: not a folder of organ cards (expected {JSON_FILE} or {TOML_FILE})")
        if _holds_card(path):
            found.append(path)
            continue
        inner = sorted(p for p in path.iterdir() if p.is_dir() and _holds_card(p))
        if not inner:
            raise OrganCardError(
                f"{path}: no {JSON_FILE} or {TOML_FILE} here or in its sub-folders; "
                "write them with `colonnade cards export MODULE -o FOLDER`"
            )
        found.extend(inner)
    return found


def _holds_card(folder: Path) -> bool:
    return (folder / JSON_FILE).is_file() or (folder / TOML_FILE).is_file()


def _first_null(value: Any, pointer: str) -> str | None:
    if value is None:
        return pointer
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _first_null(item, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
        if found is not None:
            return found
    return None
