"""The one error registry: every code the code base can produce is registered, and an unknown one fails."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator

import pytest

import colonnade
from colonnade.calls.call_errors import REGISTRY, UnregisteredCode, error, spec_for
from colonnade.errors import ColonnadeError
from tests.support.repo import ROOT

_CODE = re.compile(r"^[IAPRSCD]-[A-Z]+(-[A-Z0-9]+)+$")


def _all_subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _import_everything() -> None:
    for module in pkgutil.walk_packages(colonnade.__path__, "colonnade."):
        if ".migrations." not in module.name:
            importlib.import_module(module.name)


def test_every_colonnade_error_names_a_registered_code() -> None:
    _import_everything()
    classes = list(_all_subclasses(ColonnadeError))
    assert len(classes) >= 15  # catalog, store, contracts, config, routing... all share the base
    unregistered = {cls.__qualname__: cls.code for cls in classes if cls.code not in REGISTRY}
    assert unregistered == {}


def _literal_codes() -> Iterator[tuple[str, int, str]]:
    """Every string literal in src/ shaped like an error code, with where it is."""
    for path in sorted((ROOT / "src" / "colonnade").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CODE.match(node.value):
                yield str(path.relative_to(ROOT)), node.lineno, node.value


def test_every_code_literal_in_the_source_is_registered() -> None:
    found = list(_literal_codes())
    assert len(found) > 50
    unknown = [f"{where}:{line} {code}" for where, line, code in found if code not in REGISTRY]
    assert unknown == []


def test_an_unregistered_code_fails_loudly_instead_of_becoming_internal() -> None:
    with pytest.raises(UnregisteredCode, match="S-TOOL-TYPO"):
        error("S-TOOL-TYPO", "mistyped")
    with pytest.raises(UnregisteredCode):
        spec_for("I-REQ-NOPE")


def test_every_registered_code_has_the_taxonomy_shape() -> None:
    assert [code for code in REGISTRY if not _CODE.match(code)] == []
