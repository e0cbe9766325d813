"""Reading cards back: check a card folder (both files, every rule) or load its card for serving.

Loading never imports the organ's module: this is the static discovery the gateway starts with.
A card with error findings is refused whole, with every finding listed.
"""

from __future__ import annotations

from pathlib import Path

from colonnade.contracts.findings import Finding
from colonnade.organs.card import OrganCard
from colonnade.organs.card_files import JSON_FILE, TOML_FILE, read_card_data
from colonnade.organs.card_rules import finding, validate_card_data
from colonnade.organs.organ_errors import OrganCardError, OrganCardsInvalid

__all__ = ["check_folder", "load_card"]


def check_folder(folder: Path) -> list[Finding]:
    """Every finding of the card in `folder`: each file readable, both the same, the rules on the card."""
    files = [folder / name for name in (JSON_FILE, TOML_FILE) if (folder / name).is_file()]
    if not files:
        return [
            finding(
                "ORG001",
                "",
                f"{folder} holds neither {JSON_FILE} nor {TOML_FILE}",
                "write them with `colonnade cards export MODULE -o FOLDER`",
            )
        ]
    loaded: dict[str, dict[str, object]] = {}
    found: list[Finding] = []
    for path in files:
        try:
            loaded[path.name] = read_card_data(path)
        except OrganCardError as exc:
            found.append(finding("ORG001", "", str(exc), "fix the file's syntax, or export the cards again"))
    if len(files) == 1:
        missing = TOML_FILE if files[0].name == JSON_FILE else JSON_FILE
        found.append(
            finding(
                "ORG012",
                "",
                f"{folder} has {files[0].name} but no {missing}",
                "export both with `colonnade cards export MODULE -o FOLDER`",
            )
        )
    if len(loaded) == 2 and loaded[JSON_FILE] != loaded[TOML_FILE]:
        key = _first_difference(loaded[JSON_FILE], loaded[TOML_FILE])
        found.append(
            finding(
                "ORG012",
                key,
                f"{JSON_FILE} and {TOML_FILE} differ (first at {key or '/'})",
                "edit the organ's code, not one file, and export the cards again",
            )
        )
    if loaded:
        found.extend(validate_card_data(next(iter(loaded.values()))))
    return found


def load_card(folder: Path) -> OrganCard:
    """The card in `folder` (organ.json, else organ.toml), refused with every finding when invalid."""
    path = folder / JSON_FILE if (folder / JSON_FILE).is_file() else folder / TOML_FILE
    data = read_card_data(path)
    findings = validate_card_data(data)
    if any(f.is_error for f in findings):
        raise OrganCardsInvalid(str(path), findings)
    return OrganCard.model_validate(data)


def _first_difference(left: object, right: object, pointer: str = "") -> str:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            if left.get(key) != right.get(key):
                return _first_difference(left.get(key), right.get(key), f"{pointer}/{key}")
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{pointer}/{index}")
    return pointer
