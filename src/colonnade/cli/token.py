"""`colonnade token mint`: access tokens of the development issuer, for the demo and for tests.

The development issuer's key lives under `data_dir` (made on first use); a gateway trusts its
tokens only with `auth.dev_issuer` on. Never use it in production: anyone who can read the key
file can mint any token.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from colonnade.cli.common import console, fail, settings_of

__all__ = ["cli", "token_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

token_app = typer.Typer(help="Development tokens (the dev issuer under data_dir).", no_args_is_help=True)
cli.add_typer(token_app, name="token")


@token_app.command("mint")
def mint(
    ctx: typer.Context,
    sub: Annotated[str, typer.Option(help="Subject: the principal id.", show_default=False)],
    persona: Annotated[
        str, typer.Option(help="admin, product_owner, developer, consumer, security or agent.")
    ] = "admin",
    tenant: Annotated[str | None, typer.Option(help="Tenant claim (none: a platform admin).")] = None,
    team: Annotated[str | None, typer.Option(help="Team claim (product owners and developers).")] = None,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="A scope (repeatable; default: all of the persona's).")
    ] = None,
    ttl: Annotated[
        int | None, typer.Option(min=1, help="Lifetime in seconds (default 3600; agents 600).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="Id of the registered agent the token is for.")] = None,
    dpop_key: Annotated[
        Path | None, typer.Option(help="JWK file of the key the token is bound to (cnf.jkt, for DPoP).")
    ] = None,
    cert_file: Annotated[
        Path | None,
        typer.Option(help="PEM client certificate the token is bound to (cnf.x5t#S256, RFC 8705 mTLS)."),
    ] = None,
    audience: Annotated[
        str | None, typer.Option(help="Audience (default: the gateway's resource URL).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Write the token to this file (0600).")
    ] = None,
) -> None:
    """Mint an access token with the development issuer and print it.

    Example: colonnade token mint --sub alice --persona developer --tenant acme --team payments --ttl 900

    Bound to a client certificate (mTLS): colonnade token mint --sub alice --cert-file alice.pem
    """
    from joserfc.jwk import JWKRegistry

    from colonnade.governance.identity.dev_issuer import DevIssuer
    from colonnade.governance.identity.exposure import AuthConfigError, resource_url
    from colonnade.governance.personas import PERSONA_SCOPES, Persona, persona_of

    settings = settings_of(ctx)
    known = persona_of("agent" if agent else persona)
    if known is None:
        fail(f"unknown persona {persona!r}; use one of {', '.join(p.value for p in Persona)}")
    claims: dict[str, object] = {"sub": sub, "persona": known.value}
    granted = scope if scope else sorted(PERSONA_SCOPES[known])
    claims["scope"] = " ".join(granted)
    for name, value in (("tenant", tenant), ("team", team), ("agent_id", agent)):
        if value is not None:
            claims[name] = value
    if dpop_key is not None:
        try:
            claims["cnf"] = {"jkt": JWKRegistry.import_key(json.loads(dpop_key.read_text())).thumbprint()}
        except (OSError, ValueError) as exc:
            fail(f"cannot read the key {dpop_key}: {exc}")
    if cert_file is not None:
        confirmation = claims.setdefault("cnf", {})
        assert isinstance(confirmation, dict)
        confirmation["x5t#S256"] = _certificate_thumbprint(cert_file)
    try:
        aimed = audience or resource_url(settings)
    except AuthConfigError as exc:
        fail(str(exc))
    lifetime = ttl if ttl is not None else (600 if known is Persona.AGENT else 3600)
    token = DevIssuer.load_or_create(settings.data_dir).mint(claims, audience=aimed, ttl_s=lifetime)
    if out is not None:
        write_secret(out, token)
        console.print(f"token written to {out}")
    else:
        console.print(token, markup=False, highlight=False, soft_wrap=True)


def write_secret(path: Path, text: str) -> None:
    """Write `text` to a file only its owner can read."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
        sink.write(text + "\n")


def _certificate_thumbprint(cert_file: Path) -> str:
    import ssl

    from colonnade.governance.identity.certificate_binding import certificate_thumbprint

    try:
        return certificate_thumbprint(ssl.PEM_cert_to_DER_cert(cert_file.read_text(encoding="ascii")))
    except (OSError, ValueError, UnicodeError) as exc:
        fail(f"cannot read the PEM certificate {cert_file}: {exc}")
