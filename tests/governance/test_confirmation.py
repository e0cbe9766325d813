"""The `cnf` reader: a malformed binding is never read as unbound (fail-closed)."""

from __future__ import annotations

from typing import Any

import pytest

from colonnade.governance.identity.confirmation import X5T_S256, Confirmation, confirmation


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({}, Confirmation()),
        ({"cnf": None}, Confirmation()),
        ({"cnf": {}}, Confirmation()),
        ({"cnf": {"jkt": "abc"}}, Confirmation(key="abc")),
        ({"cnf": {X5T_S256: "th"}}, Confirmation(certificate="th")),
        ({"cnf": {"jkt": "abc", X5T_S256: "th"}}, Confirmation(key="abc", certificate="th")),
        # malformed: bound to nothing that can match, never unbound
        ({"cnf": "abc"}, Confirmation(key="")),
        ({"cnf": ["abc"]}, Confirmation(key="")),
        ({"cnf": {"jkt": ""}}, Confirmation(key="")),
        ({"cnf": {"jkt": 7}}, Confirmation(key="")),
        ({"cnf": {"jkt": None}}, Confirmation(key="")),
        ({"cnf": {X5T_S256: 7}}, Confirmation(certificate=7)),
    ],
)
def test_confirmation_reads_each_binding(claims: dict[str, Any], expected: Confirmation) -> None:
    assert confirmation(claims) == expected
