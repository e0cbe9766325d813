"""What does binding a commit (or discard, or resume) to its owner add to it?

`ResumeAuthority.check` runs before a parked call's token is taken: the owner's key and tenant, then
the authorize stage (`ToolAccess`) on the parked tool with the parked arguments, as the owner stands
now. Measured in process on the two-phase fixture contract (no backend, no database), for the owner
(admitted: the path every real commit pays), a consumer whose subscription is checked, and an
intruder (refused by key, before any stage runs). The table shows the median round's CPU and wall
microseconds per check.

Run: .venv/bin/python bench/resume_authority.py [--checks 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _stack import cost_rounds

from colonnade.calls.resume_authority import ParkedOwner, ResumeAuthority
from colonnade.catalog.catalog import Catalog
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.tool_access import ToolAccess
from tests.support.hold_contract import hold_contract


def _person(id: str, persona: Persona) -> Principal:
    return Principal(
        PrincipalKind.USER, id, tenant="acme", persona=persona.value, scopes=PERSONA_SCOPES[persona]
    )


async def main(checks: int, rounds: int) -> None:
    catalog = Catalog()
    catalog.publish(hold_contract("acme", "http://127.0.0.1:9"))
    authority = ResumeAuthority(catalog, ToolAccess(catalog, lambda key, tenant, api: key == "user:erin"))
    cases = {
        "owner (admin), admitted": (_person("alice", Persona.ADMIN), _person("alice", Persona.ADMIN)),
        "owner (subscribed consumer), admitted": (
            _person("erin", Persona.CONSUMER),
            _person("erin", Persona.CONSUMER),
        ),
        "intruder, refused by key": (_person("alice", Persona.ADMIN), _person("bob", Persona.ADMIN)),
    }
    table = Table("check", "CPU µs", "wall µs")
    for name, (owner, resumer) in cases.items():
        parked = ParkedOwner(owner.key, owner.tenant, "acme:holds:reserve", "1.0.0", "call-1", "prepared")

        async def work(n: int, parked: ParkedOwner = parked, resumer: Principal = resumer) -> None:
            for _ in range(n):
                await authority.check(parked, resumer, doing="commit", call_id="c", input={"item_id": "I-1"})

        cpu, wall = await cost_rounds(work, checks, rounds)
        table.add_row(name, f"{cpu:.1f}", f"{wall:.1f}")
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.checks, args.rounds))
