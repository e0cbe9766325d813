"""Server-rendered pages for people: login, the catalog, one tool, call metrics, the audit log and
the approvals queue.

Plain HTML from small functions, every value escaped, no script and nothing loaded from
elsewhere; behind the same Host/Origin check and authentication as every route, with a session
cookie for people and a CSRF token on every form that changes something.
"""

from colonnade.surfaces.pages.site import Pages, routes

__all__ = ["Pages", "routes"]
