"""The vault organ: blobs kept in SQLite, and a similarity sub-organ that searches their text.

Served by the demo next to the CRM and billing contracts; its cards are in `cards/` (written by
`colonnade cards export examples.organs.vault -o examples/organs/vault/cards`).
"""

from __future__ import annotations

from examples.organs.vault.organ import organ

__all__ = ["organ"]
