"""`colonnade policy test | eval`: run the policies' own Rego tests, and explain one decision.

Both read the policy set the gateway would load (the shipped policies when `policy.builtin` is
true, then `policy.directories`), or only the directory given. Exit codes: 0 all good (or the
call allowed), 1 a test failed (or the call denied), 2 a usage or compile problem.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from colonnade.cli.common import EXIT_FINDINGS, EXIT_OK, OutputFormat, console, fail, print_json, settings_of
from colonnade.config import Settings

if TYPE_CHECKING:
    from colonnade.catalog.tool import Tool
    from colonnade.governance.policy.sources import PolicySet

__all__ = ["cli", "policy_app"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

policy_app = typer.Typer(help="Test the Rego policies and explain their decisions.", no_args_is_help=True)
cli.add_typer(policy_app, name="policy")

DirectoryArgument = Annotated[
    Path | None,
    typer.Argument(
        help="A policy directory to use alone (default: the configured policy set).",
        exists=True,
        file_okay=False,
        show_default=False,
    ),
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", help="text or json.")]


@policy_app.command("test")
def test_policies(
    ctx: typer.Context, directory: DirectoryArgument = None, output: FormatOption = OutputFormat.TEXT
) -> None:
    """Run every test_ rule of the *_test.rego files, with the policies beside them.

    Example: colonnade policy test src/colonnade/policies/examples
    """
    from colonnade.governance.policy.engine import PolicyError
    from colonnade.governance.policy.rego_tests import RegoTestOutcome, run_rego_tests

    settings = settings_of(ctx)
    policy_set = _policy_set(settings, directory)
    try:
        results = run_rego_tests(policy_set, settings.policy.data)
    except PolicyError as exc:
        fail(str(exc))
    passed = sum(result.outcome is RegoTestOutcome.PASS for result in results)
    if output is OutputFormat.JSON:
        print_json(
            {
                "version": policy_set.version,
                "passed": passed,
                "total": len(results),
                "tests": [{"file": r.file, "name": r.name, "outcome": r.outcome.value} for r in results],
            }
        )
    else:
        table = Table("file", "test", "result")
        colours = {RegoTestOutcome.PASS: "green", RegoTestOutcome.FAIL: "red", RegoTestOutcome.ERROR: "red"}
        for result in results:
            shown = f"[{colours[result.outcome]}]{result.outcome.value.upper()}[/]"
            table.add_row(Path(result.file).name, result.name, shown)
        console.print(table)
        console.print(f"{passed}/{len(results)} passed (policy set {policy_set.version})")
    if not results:
        fail("no test_ rules found in any *_test.rego file", EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK if passed == len(results) else EXIT_FINDINGS)


@policy_app.command("eval")
def eval_decision(
    ctx: typer.Context,
    tool: Annotated[str, typer.Option(help="The tool's canonical name, tenant:api:operation.")],
    principal: Annotated[
        str, typer.Option(help="Who calls, kind:id (user:alice, agent:invoice-bot).")
    ] = "user:local",
    tenant: Annotated[str | None, typer.Option(help="The caller's tenant.")] = None,
    persona: Annotated[str | None, typer.Option(help="The caller's persona.")] = None,
    scope: Annotated[list[str] | None, typer.Option(help="A scope of the caller (repeat).")] = None,
    args: Annotated[str, typer.Option("--args", help="The call's arguments, a JSON object.")] = "{}",
    at: Annotated[
        datetime | None, typer.Option(help="When the call happens (ISO, UTC unless it has an offset).")
    ] = None,
    side_effects: Annotated[
        str | None,
        typer.Option(help="none, read, write or destructive, for a tool not in the configured contracts."),
    ] = None,
    contract: Annotated[
        list[Path] | None,
        typer.Option(help="Contract file or folder to find the tool in (default: the configured contracts)."),
    ] = None,
    directory: Annotated[
        Path | None, typer.Option("--policies", help="A policy directory to use alone.", file_okay=False)
    ] = None,
    output: FormatOption = OutputFormat.TEXT,
) -> None:
    """Explain the decision the policies take on one call: which rules fired, and the obligations.

    Example: colonnade policy eval --tool acme:billing:void_invoice --principal agent:invoice-bot
    --tenant acme --contract examples/contracts --args '{"invoice_id": "inv_1"}'
    """
    from colonnade.governance.policy.engine import CompiledPolicy, PolicyError
    from colonnade.governance.policy.input_document import principal_document, time_document

    settings = settings_of(ctx)
    arguments = _arguments(args)
    document = {
        "principal": principal_document(_principal(principal, tenant, persona, scope or [])),
        "tool": _tool_document(tool, side_effects, contract or settings.contracts, settings),
        "arguments": arguments,
        "time": time_document(_moment(at), settings.policy.time_zones.get(tool.split(":")[0])),
    }
    policy_set = _policy_set(settings, directory)
    try:
        decision = CompiledPolicy(policy_set, settings.policy.data).evaluate(document)
    except PolicyError as exc:
        fail(str(exc))
    if output is OutputFormat.JSON:
        print_json({"input": document, "decision": decision.to_dict()})
    else:
        _print_decision(decision.to_dict())
    raise typer.Exit(EXIT_OK if decision.allowed else EXIT_FINDINGS)


def _policy_set(settings: Settings, directory: Path | None) -> PolicySet:
    from colonnade.governance.policy.sources import PolicySet, PolicySourceError, policy_directories

    directories = (
        (directory,)
        if directory is not None
        else policy_directories(settings.policy.builtin, settings.policy.directories)
    )
    if not directories:
        fail(
            "no policies are configured (policy.builtin is false and policy.directories is empty): "
            "give a folder (colonnade policy test ./policies), add one to policy.directories, or set "
            "policy.builtin: true for the shipped ones"
        )
    try:
        return PolicySet.read(directories)
    except PolicySourceError as exc:
        fail(str(exc))


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"--args is not JSON: {exc.msg} at character {exc.pos} (give an object, e.g. '{{\"id\": 1}}')")
    if not isinstance(value, dict):
        fail("--args must be a JSON object of argument names and values, e.g. '{\"id\": 1}'")
    return value


def _principal(text: str, tenant: str | None, persona: str | None, scopes: list[str]) -> Any:
    from colonnade.governance.principal import Principal, PrincipalKind

    kind, _, ident = text.partition(":")
    known = [k.value for k in PrincipalKind]
    if kind not in known or not ident:
        fail(f"--principal must be kind:id with kind one of {', '.join(known)} (e.g. agent:invoice-bot)")
    return Principal(PrincipalKind(kind), ident, tenant=tenant, persona=persona, scopes=frozenset(scopes))


def _tool_document(
    name: str, side_effects: str | None, contracts: list[Path], settings: Settings
) -> dict[str, Any]:
    from colonnade.governance.policy.input_document import tool_document

    parts = name.split(":")
    if len(parts) != 3 or not all(parts):
        fail(f"--tool must be a canonical name, tenant:api:operation (got {name!r})")
    found = _find_tool(name, contracts, settings)
    if found is not None:
        document = tool_document(found)
        if side_effects is not None:
            document["side_effects"] = side_effects
        return document
    if side_effects is None:
        fail(f"no configured contract serves {name}: give --contract FILE, or --side-effects for a sketch")
    if side_effects not in ("none", "read", "write", "destructive"):
        fail("--side-effects must be none, read, write or destructive")
    tenant, api, operation = parts
    return {
        "name": name,
        "tenant": tenant,
        "api": api,
        "operation": operation,
        "side_effects": side_effects,
        "requires_human_approval": False,
        "safe_for_agents": True,
        "environment": None,
        "owner": None,
        "tags": [],
        "source": "contract",
    }


def _find_tool(name: str, contracts: list[Path], settings: Settings) -> Tool | None:
    from colonnade.catalog.projection import project_contract
    from colonnade.contracts.validate import load_contract
    from colonnade.runtime.sources import expand_contract_paths

    for path in expand_contract_paths(contracts):
        try:
            contract = load_contract(path)
        except Exception as exc:  # a broken contract file is named, not traced
            fail(f"{path}: cannot be read as a contract ({type(exc).__name__}: {exc})")
        for tool in project_contract(contract, profile=settings.wire_profile):
            if tool.canonical_name == name:
                return tool
    return None


def _moment(at: datetime | None) -> datetime:
    from datetime import UTC

    if at is None:
        return datetime.now(UTC)
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _print_decision(decision: dict[str, Any]) -> None:
    verdict = "[green]ALLOWED[/green]" if decision["allowed"] else "[red]DENIED[/red]"
    console.print(f"{verdict} by policy set {decision['policy_version']}")
    table = Table("rule", "fired with")
    for rule in ("deny", "require_approval", "require_attestation", "redact_output_fields"):
        fired = decision[rule]
        table.add_row(rule, "\n".join(fired) if fired else "[dim]-[/dim]")
    console.print(table)
    obligations = [rule for rule in ("require_approval", "require_attestation") if decision[rule]]
    if decision["redact_output_fields"]:
        obligations.append("redact " + ", ".join(decision["redact_output_fields"]))
    console.print("obligations: " + (", ".join(obligations) if obligations else "none"))
