"""Organs named in the configuration: their cards (read, not imported) and pathways, as catalog tools.

The gateway serves every function of every card under `organs.tenant`, and every pathway as one
tool; the modules stay unimported until a function is first called.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from colonnade.catalog.naming import WireProfile
from colonnade.catalog.tool import Tool
from colonnade.config import OrganSettings
from colonnade.organs.card_files import card_folders
from colonnade.organs.card_loading import load_card
from colonnade.organs.loading import OrganHost, add_import_paths
from colonnade.organs.organ_errors import OrganLoadError
from colonnade.organs.pathways import Pathway, load_pathways, pathway_tool
from colonnade.organs.projection import organ_tools

__all__ = ["ORGAN_SOURCE", "OrganSources", "load_organ_sources"]

ORGAN_SOURCE = "organs"
"""The catalog source id the organ and pathway tools are served under."""


@dataclass(frozen=True, slots=True)
class OrganSources:
    host: OrganHost
    pathways: list[Pathway]
    tools: list[Tool]


def load_organ_sources(
    settings: OrganSettings, *, data_dir: Path, profile: WireProfile, host: OrganHost | None = None
) -> OrganSources:
    """Cards and pathways of the settings (plus `host`'s organs, when given), as tools."""
    add_import_paths(settings.import_paths)
    if host is None:
        cards = [load_card(folder) for folder in card_folders(settings.cards)]
        for card in cards:
            if "embedded" not in card.execution_modes:
                raise OrganLoadError(
                    f"organ '{card.name}' runs only as {', '.join(card.execution_modes)} (its card's "
                    "execution_modes), not embedded in the gateway; remove it from organs.cards and run "
                    "it with `colonnade organ serve`"
                )
        host = OrganHost(cards, data_dir=data_dir / "organs")
    pathways = load_pathways(settings.pathways, host)
    tools = [
        tool for card in host.cards for tool in organ_tools(card, tenant=settings.tenant, profile=profile)
    ]
    tools += [pathway_tool(p, host, tenant=settings.tenant, profile=profile) for p in pathways]
    return OrganSources(host, pathways, tools)
