"""The gateway's own platform functions (ADR-012) as governed tools, served by the builtin adapter.

Each core tool is defined once (`CoreTool`): a built-in catalog record with schemas, annotations and
ADR-012's persona matrix, and one implementation over the governance, catalog and contract
services. Calls run the pipeline like any tool's; `PlatformAccess` decides who sees and calls them.
"""

from colonnade.platform.access import PlatformAccess, core_decision
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.core_tools import ADR_SERVED_ELSEWHERE, CORE_TOOLS, core_handlers
from colonnade.platform.services import PlatformServices

__all__ = [
    "ADR_SERVED_ELSEWHERE",
    "CORE_TOOLS",
    "CoreTool",
    "PlatformAccess",
    "PlatformServices",
    "core_decision",
    "core_handlers",
]
