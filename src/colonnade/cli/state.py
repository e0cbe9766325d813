"""What one `colonnade` invocation carries from the root options to its command."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from colonnade.config import Settings

__all__ = ["State"]


@dataclass
class State:
    """The `--config` path, and the settings loaded from it once (by `common.settings_of`)."""

    config_path: Path | None = None
    _settings: Settings | None = field(default=None, repr=False)
