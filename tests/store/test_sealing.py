"""Sealing at rest: values open only with their key and their context, and keys rotate."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from colonnade.store.sealing import KEY_RING_FILE, Sealer, SealError


def test_a_sealed_value_opens_with_its_context_and_hides_its_plaintext() -> None:
    sealer = Sealer.generate()
    token = sealer.seal(b"refresh-token-123", context="upstream:crm:alice")
    assert b"refresh-token-123" not in token.encode()
    assert sealer.open(token, context="upstream:crm:alice") == b"refresh-token-123"
    with pytest.raises(SealError, match="another context"):
        sealer.open(token, context="upstream:crm:mallory")


def test_an_altered_value_does_not_open() -> None:
    sealer = Sealer.generate()
    token = sealer.seal(b"secret", context="c")
    altered = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    with pytest.raises(SealError):
        sealer.open(altered, context="c")


def test_a_rotated_ring_opens_old_values_and_seals_with_the_new_key() -> None:
    old = Sealer.generate()
    token = old.seal(b"before", context="c")
    fresh = Sealer.generate()
    rotated = Sealer({**old.keys, **fresh.keys}, fresh.current)
    assert rotated.open(token, context="c") == b"before"
    assert rotated.key_id(rotated.seal(b"after", context="c")) == fresh.current
    with pytest.raises(SealError, match="no longer holds"):
        fresh.open(token, context="c")


def test_the_data_dir_ring_is_created_owner_only_and_read_back(tmp_path: Path) -> None:
    first = Sealer.load_or_create(tmp_path)
    mode = stat.S_IMODE((tmp_path / KEY_RING_FILE).stat().st_mode)
    assert mode == 0o600
    again = Sealer.load_or_create(tmp_path)
    assert again.open(first.seal(b"x", context="c"), context="c") == b"x"


def test_a_broken_ring_file_says_what_it_expects(tmp_path: Path) -> None:
    (tmp_path / KEY_RING_FILE).write_text('{"keys": []}')
    with pytest.raises(SealError, match="expected"):
        Sealer.load_or_create(tmp_path)
