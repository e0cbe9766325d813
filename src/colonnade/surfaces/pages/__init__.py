"""Server-rendered pages for people: the catalog, one tool, and the gateway's call metrics.

Plain HTML from small functions, every value escaped, no script and nothing loaded from
elsewhere; read-only, behind the same Host/Origin check as the REST reads.
"""

from colonnade.surfaces.pages.site import Pages, routes

__all__ = ["Pages", "routes"]
