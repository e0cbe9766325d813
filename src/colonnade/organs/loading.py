"""Finding an organ in a Python module, and the host that imports each organ on its first call.

An entrypoint is `module:attribute`, or just `module`: then the module's `organ` attribute, or
its one organ object. The host knows organs by their cards (static discovery); the module is
imported when a function is first called, and the organ it yields must answer every operation
its card lists, or the cards are stale and the call says so.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeGuard

from colonnade.organs.card import OrganCard
from colonnade.organs.organ_errors import OrganLoadError
from colonnade.organs.protocol import Organ

__all__ = ["OrganHost", "add_import_paths", "entrypoint_of", "import_organ"]

DEFAULT_ATTRIBUTE = "organ"


def add_import_paths(paths: Iterable[Path]) -> None:
    """Put folders in front of the module search path (once each), so organ modules there import."""
    for path in reversed(list(paths)):
        text = str(path.resolve())
        if text not in sys.path:
            sys.path.insert(0, text)


def import_organ(entrypoint: str) -> tuple[Organ, str]:
    """The organ an entrypoint names, and the entrypoint in full (`module:attribute`)."""
    module_name, _, attribute = entrypoint.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise OrganLoadError(
            f"cannot import the organ module {module_name!r}: {exc}; check the name, and that its folder "
            "is on the Python path (organs.import_paths, or --import-path)"
        ) from None
    except Exception as exc:  # the module's own code failed while importing
        raise OrganLoadError(
            f"the organ module {module_name!r} failed while importing ({type(exc).__name__}: {exc})"
        ) from None
    if attribute:
        found = getattr(module, attribute, None)
        if not _is_organ(found):
            raise OrganLoadError(
                f"{module_name}:{attribute} is not an organ (it needs describe() and async stimulate())"
            )
        return found, entrypoint
    named = getattr(module, DEFAULT_ATTRIBUTE, None)
    if _is_organ(named):
        return named, f"{module_name}:{DEFAULT_ATTRIBUTE}"
    organs = [name for name, value in vars(module).items() if _is_organ(value) and not name.startswith("_")]
    if len(organs) != 1:
        listed = ", ".join(organs) or "none"
        raise OrganLoadError(
            f"module {module_name!r} has no attribute 'organ' and {len(organs)} organ objects ({listed}); "
            f"name one as {module_name}:ATTRIBUTE"
        )
    return getattr(module, organs[0]), f"{module_name}:{organs[0]}"


def _is_organ(value: object) -> TypeGuard[Organ]:
    """An organ object (a class with the same methods is not one)."""
    return isinstance(value, Organ) and not isinstance(value, type)


def entrypoint_of(card: OrganCard) -> str:
    if not card.entrypoint:
        raise OrganLoadError(
            f"organ '{card.name}' has no entrypoint in its card, so it cannot run; export its cards with "
            "`colonnade cards export MODULE -o FOLDER`"
        )
    return card.entrypoint


class OrganHost:
    """The organs one gateway serves: cards now, modules on first use; each organ may get a folder."""

    def __init__(
        self,
        cards: Sequence[OrganCard] = (),
        *,
        organs: Sequence[Organ] = (),
        data_dir: Path | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._cards: dict[str, OrganCard] = {}
        self._loaded: dict[str, Organ] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        for card in cards:
            self._add_card(card)
        for organ in organs:
            card = organ.describe()
            self._add_card(card)
            self._loaded[card.name] = organ

    def _add_card(self, card: OrganCard) -> None:
        if card.name in self._cards:
            raise OrganLoadError(
                f"two organs are named '{card.name}'; organ names must be unique in a gateway"
            )
        self._cards[card.name] = card

    @property
    def cards(self) -> tuple[OrganCard, ...]:
        return tuple(self._cards.values())

    def card(self, name: str) -> OrganCard | None:
        return self._cards.get(name)

    def loaded(self, name: str) -> bool:
        """Whether the organ's module was imported (for tests of static discovery)."""
        return name in self._loaded

    def folder_for(self, name: str) -> str | None:
        return str(self.data_dir / name) if self.data_dir is not None else None

    async def organ(self, name: str) -> Organ:
        """The organ, imported on first use; OrganLoadError when it cannot be, or does not fit its card."""
        found = self._loaded.get(name)
        if found is not None:
            return found
        card = self._cards.get(name)
        if card is None:
            raise OrganLoadError(
                f"no organ named '{name}' is served (served: {', '.join(self._cards) or 'none'})"
            )
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            if name not in self._loaded:
                imported, _ = await asyncio.to_thread(import_organ, entrypoint_of(card))
                _check_fit(card, imported.describe())
                self._loaded[name] = imported
        return self._loaded[name]


def _check_fit(card: OrganCard, live: OrganCard) -> None:
    if live.name != card.name:
        raise OrganLoadError(
            f"the entrypoint {card.entrypoint} holds organ '{live.name}', not '{card.name}'; "
            "export the cards again"
        )
    missing = [op for op in card.operations() if op not in live.operations()]
    if missing:
        raise OrganLoadError(
            f"organ '{card.name}' no longer answers {', '.join(missing)} listed in its card; "
            "export the cards again (colonnade cards export) and restart the gateway"
        )
