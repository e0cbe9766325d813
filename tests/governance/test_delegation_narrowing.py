"""The narrowing rules of delegation: an entry is granted only when every bound provably covers it,
with the allow-list semantics (a glob reaches only tools safe for agents, an exact name any tool)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase

import pytest

from colonnade.governance.identity.delegated_tokens import actors_of, nested_act
from colonnade.governance.identity.delegation_narrowing import covered, narrow_scopes, narrow_tools
from colonnade.governance.identity.dpop import ProofsSeen
from colonnade.governance.policy.input_document import delegation_document
from colonnade.governance.principal import Principal, PrincipalKind

SAFE = {"acme:items:read_item", "acme:items:write_item"}


def _safe(name: str) -> bool:
    return name in SAFE


@pytest.mark.parametrize(
    ("pattern", "bound", "expected"),
    [
        ("acme:items:read_item", ["acme:items:read_item"], True),
        ("acme:items:read_item", ["acme:items:*"], True),  # safe: the glob reaches it
        ("acme:items:drop_item", ["acme:items:*"], False),  # unsafe: the glob does not reach it
        ("acme:items:drop_item", ["acme:items:drop_item"], True),
        ("acme:items:*", ["acme:*"], True),
        ("acme:items:*", ["*"], True),
        ("acme:*", ["acme:items:*"], False),
        ("acme:items:*", ["acme:items:read_item"], False),
        ("acme:item?:*", ["acme:items:*"], False),  # `?` reaches acme:itemz:..., outside the bound
        ("acme:items:[rw]*", ["acme:items:*"], True),
        ("acme:items:*", ["acme:items:[rw]*"], False),  # the bound's glob is not a plain prefix
    ],
)
def test_covered_is_sound_for_allow_list_semantics(pattern: str, bound: list[str], expected: bool) -> None:
    assert covered(pattern, bound, _safe) is expected


def test_a_covered_glob_never_reaches_a_name_its_bound_misses() -> None:
    names = ["acme:items:read_item", "acme:itemz:x", "acme:items:", "acme:lab:read_item", "globex:items:a"]
    globs = ["acme:*", "acme:items:*", "acme:item?:*", "acme:items:[rw]*", "*", "acme:lab:*"]
    for inner in globs:
        for outer in globs:
            if covered(inner, [outer]):
                for name in names:
                    assert not fnmatchcase(name, inner) or fnmatchcase(name, outer), (inner, outer, name)


def test_narrow_tools_names_every_wider_entry_and_defaults_to_what_all_bounds_share() -> None:
    parent, actor = ["acme:items:*", "acme:lab:read_item"], ["acme:items:read_item", "acme:lab:*"]
    asked = narrow_tools(
        ["acme:items:read_item", "acme:lab:read_item", "acme:items:*"], [parent, actor], _safe
    )
    assert asked.wider == ("acme:lab:read_item", "acme:items:*")
    assert narrow_tools(None, [parent, actor], _safe).granted == ("acme:items:read_item",)
    # a person sets no list: the actor's own bounds the request alone
    person = narrow_tools(["acme:lab:dev_*", "acme:lab:write_item"], [None, actor], _safe)
    assert person.wider == ("acme:lab:write_item",)  # not safe for agents: acme:lab:* does not reach it
    assert narrow_tools(None, [None, actor], _safe).granted == tuple(actor)


def test_narrow_scopes_refuses_what_the_parent_does_not_hold() -> None:
    parent = frozenset({"colonnade:catalog:read", "colonnade:catalog:write"})
    assert narrow_scopes(None, parent).granted == ("colonnade:catalog:read", "colonnade:catalog:write")
    assert narrow_scopes(["colonnade:catalog:read"], parent).wider == ()
    assert narrow_scopes(["colonnade:catalog:read", "colonnade:security:write"], parent).wider == (
        "colonnade:security:write",
    )


def test_the_act_claim_nests_the_chain_and_reads_back() -> None:
    claim = nested_act(("planner", "researcher", "writer"))
    assert claim == {"sub": "writer", "act": {"sub": "researcher", "act": {"sub": "planner"}}}
    assert actors_of(claim) == ("planner", "researcher", "writer")
    for malformed in (None, {}, {"sub": ""}, {"sub": "a", "act": "b"}, {"sub": 3}, ["a"]):
        assert actors_of(malformed) is None, malformed


def test_the_policy_input_says_how_far_the_call_is_from_its_person() -> None:
    chained = Principal(
        PrincipalKind.AGENT, "researcher", actor_chain=("user:alice", "agent:planner", "agent:researcher")
    )
    assert delegation_document(chained) == {"depth": 2, "origin": "user:alice", "hops_from_person": 2}
    no_person = Principal(PrincipalKind.AGENT, "b", actor_chain=("agent:a", "agent:b"))
    assert delegation_document(no_person) == {"depth": 1, "origin": "agent:a", "hops_from_person": None}
    assert delegation_document(Principal(PrincipalKind.USER, "alice")) == {
        "depth": 0,
        "origin": "user:alice",
        "hops_from_person": 0,
    }
    assert delegation_document(Principal(PrincipalKind.AGENT, "bot"))["hops_from_person"] is None


async def test_the_in_memory_replay_cache_sweeps_rarely_and_still_refuses_replays() -> None:
    seen = ProofsSeen()
    later = datetime.now(UTC) + timedelta(minutes=5)
    for n in range(25_000):
        assert await seen(f"p{n}", later)
    assert not await seen("p1", later) and not await seen("p24999", later)
    gone = datetime.now(UTC) - timedelta(seconds=1)
    assert await seen("old", gone) and await seen("old", later)  # an expired entry no longer counts
