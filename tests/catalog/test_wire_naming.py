"""Canonical <-> wire names: readable in the common case, reversible always; the one meeting place
(a `.` written as `_` in the strict profile) is caught by the registry's collision check."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from colonnade.catalog import InvalidCanonicalName, WireNameCollision, naming
from colonnade.catalog.naming import (
    WireNames,
    WireProfile,
    from_wire,
    join_canonical,
    split_canonical,
    to_wire,
    wire_name_pattern,
)

PROFILES: tuple[WireProfile, ...] = ("strict", "mcp")

KEBAB = st.from_regex(r"\A[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}\Z")
TOOL_NAME = st.from_regex(r"\A[A-Za-z0-9_.-]{1,64}\Z")
NASTY = st.text(alphabet="_-.:aZ9", min_size=1, max_size=12)
ANY_TEXT = st.text(min_size=1, max_size=40)


def segment(tool: bool) -> st.SearchStrategy[str]:
    """Tenant/api segments cannot hold ':'; the tool segment can hold anything."""
    strategy = st.one_of(NASTY, ANY_TEXT, TOOL_NAME)
    return strategy if tool else strategy.filter(lambda s: ":" not in s)


CANONICAL = st.one_of(
    st.tuples(KEBAB, KEBAB, TOOL_NAME).map(":".join),
    st.tuples(segment(False), segment(False), segment(True)).map(":".join),
)


@pytest.mark.parametrize(
    ("canonical", "strict", "mcp"),
    [
        ("acme:crm:search_customers", "acme__crm__search_customers", "acme.crm.search_customers"),
        ("acme-corp:crm-v2:list-items", "acme-corp__crm-v2__list-items", "acme-corp.crm-v2.list-items"),
        ("acme:crm:getCustomer_v2", "acme__crm__getCustomer_v2", "acme.crm.getCustomer_v2"),
        ("acme:crm:x__y", "acme__crm__x_-_5f-y", "acme.crm.x__y"),
        ("acme:crm:.hidden", "acme__crm__-_2e-hidden", "acme.crm.-_2e-hidden"),  # no `_` at an edge
        ("acme:crm:_private", "acme__crm__-_5f-private", "acme.crm._private"),
        ("acme:crm:a-_b", "acme__crm__a--_5f-b", "acme.crm.a--_5f-b"),
        ("acme:crm:a:b", "acme__crm__a-_3a-b", "acme.crm.a-_3a-b"),
        ("été:crm:x", "-_e9-t-_e9-__crm__x", "-_e9-t-_e9-.crm.x"),
    ],
)
def test_known_names(canonical: str, strict: str, mcp: str) -> None:
    assert to_wire(canonical, "strict") == strict
    assert to_wire(canonical, "mcp") == mcp
    assert from_wire(strict, "strict") == canonical
    assert from_wire(mcp, "mcp") == canonical


@pytest.mark.parametrize(
    ("canonical", "strict", "mcp"),
    [
        ("acme:vault:sim.search", "acme__vault__sim_search", "acme.vault.sim-_2e-search"),
        ("acme:crm:v1.search", "acme__crm__v1_search", "acme.crm.v1-_2e-search"),
        ("acme:crm:a.b.c", "acme__crm__a_b_c", "acme.crm.a-_2e-b-_2e-c"),
        ("acme:crm:a..b", "acme__crm__a_-_2e-b", "acme.crm.a-_2e--_2e-b"),  # a second `_` would blur `__`
    ],
)
def test_a_dot_reads_as_an_underscore_in_the_strict_profile(canonical: str, strict: str, mcp: str) -> None:
    assert to_wire(canonical) == strict
    assert to_wire(canonical, "mcp") == mcp  # `.` is the mcp profile's separator: escaped there
    registry = WireNames()
    assert registry.add(canonical) == strict and registry.canonical(strict) == canonical


def test_a_dotted_and_an_underscored_name_meet_and_the_registry_says_so() -> None:
    registry = WireNames()
    registry.add("acme:vault:similarity.search")
    with pytest.raises(WireNameCollision) as caught:
        registry.add("acme:vault:similarity_search")
    assert (caught.value.wire, caught.value.existing) == (
        "acme__vault__similarity_search",
        "acme:vault:similarity.search",
    )
    assert "rename one of the tools" in caught.value.fix


def _meets(decoded: str, canonical: str) -> bool:
    """`decoded` is `canonical` with some `.` read as `_` (the strict profile's readable dots)."""
    return len(decoded) == len(canonical) and all(
        a == b or (b == "." and a == "_") for a, b in zip(decoded, canonical, strict=True)
    )


@given(KEBAB, KEBAB, TOOL_NAME)
@example("00000000", "00000000-0-0", "0" * 41)  # 65 characters: shortened, not readable in full
@example("000000-000000-00000000", "00000000-00000000-00000000", "0" * 13)  # the cut meets a `__`
def test_plain_contract_names_stay_readable(tenant: str, api: str, tool: str) -> None:
    plain = "." not in tool and "__" not in tool and "-_" not in tool and not tool.startswith("_")
    plain = plain and not tool.endswith("_")
    readable = f"{tenant}__{api}__{tool}"
    if plain and len(readable) <= 64:
        assert to_wire(f"{tenant}:{api}:{tool}") == readable
    elif plain:  # too long for the strict profile: cut at 64 with the hash mark, readable up to it
        wire = to_wire(f"{tenant}:{api}:{tool}")
        kept = wire[: wire.index("-_-")]
        assert readable.startswith(kept)
        # The cut falls between tokens: a `__` separator is one, so it may end one character short.
        assert len(wire) == 64 or (len(wire) == 63 and readable[len(kept) :].startswith("__"))
    readable_mcp = f"{tenant}.{api}.{tool.replace('.', '-_2e-')}"
    dotted = "." in tool and "__" not in tool and "-_" not in tool and tool[0] not in "._"
    dotted = dotted and tool[-1] not in "._" and ".." not in tool and "._" not in tool and "_." not in tool
    if dotted and len(f"{tenant}__{api}__{tool}") <= 64:
        assert to_wire(f"{tenant}:{api}:{tool}") == f"{tenant}__{api}__{tool.replace('.', '_')}"
    if "-_" not in tool and "._" not in tool and len(readable_mcp) <= 128:
        assert to_wire(f"{tenant}:{api}:{tool}", "mcp") == readable_mcp


@settings(max_examples=400)
@given(CANONICAL)
def test_wire_names_match_the_profile_and_reverse(canonical: str) -> None:
    for profile in PROFILES:
        wire = to_wire(canonical, profile)
        assert wire_name_pattern(profile).match(wire)
        decoded = from_wire(wire, profile)
        if "-_-" in wire:
            assert decoded is None
        elif profile == "mcp" or "." not in canonical:
            assert decoded == canonical
        else:  # a `.` may read as `_`: the same name but for those, and it encodes to this wire
            assert decoded is not None and _meets(decoded, canonical), (decoded, canonical)
            assert to_wire(decoded, profile) == wire


@settings(max_examples=400)
@given(st.text(alphabet="_-.:aZ9", min_size=1, max_size=20))
def test_every_wire_name_stands_for_at_most_one_canonical_name(wire: str) -> None:
    for profile in PROFILES:
        canonical = from_wire(wire, profile)
        if canonical is not None:
            assert to_wire(canonical, profile) == wire


@settings(max_examples=100)
@given(st.lists(CANONICAL, min_size=1, max_size=60, unique=True))
def test_a_registry_of_many_names_has_no_collisions_and_resolves_all(names: list[str]) -> None:
    for profile in PROFILES:
        registry = WireNames(profile)
        if profile == "strict":  # names that differ only by `.` for `_` meet: the collision check
            names = list({to_wire(name): name for name in names}.values())
        wires = [registry.add(name) for name in names]
        assert len(set(wires)) == len(names)
        assert all(registry.canonical(w) == n for w, n in zip(wires, names, strict=True))
        assert all(registry.wire(n) == w for w, n in zip(wires, names, strict=True))


def test_long_names_are_shortened_deterministically_and_resolve_through_the_registry() -> None:
    first = "acme:crm:" + "search_customers_by_region_and_lifetime_value_" * 2 + "one"
    second = "acme:crm:" + "search_customers_by_region_and_lifetime_value_" * 2 + "two"
    registry = WireNames()

    wire_one, wire_two = registry.add(first), registry.add(second)

    assert len(wire_one) == 64
    assert wire_one.startswith("acme__crm__search_customers_by_region_and")
    assert wire_one != wire_two
    assert wire_one == to_wire(first)
    assert from_wire(wire_one) is None
    assert registry.canonical(wire_one) == first
    assert registry.canonical(wire_two) == second
    assert to_wire(first, "mcp") == "acme.crm." + first.split(":", 2)[2]


def test_shortening_never_cuts_an_escape_in_half() -> None:
    canonical = "acme:crm:" + "a" * 47 + "." + "b" * 20
    wire = to_wire(canonical)

    assert len(wire) <= 64
    assert wire.endswith("-_-" + wire[-10:])
    prefix = wire[: -len("-_-") - 10]
    assert prefix.endswith("a") or prefix.endswith("-_2e-")


def test_registry_reports_a_hash_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(naming, "_HASH_LENGTH", 1)
    registry = WireNames()
    names = [f"acme:crm:{'x' * 70}{i}" for i in range(40)]

    with pytest.raises(WireNameCollision) as caught:
        for name in names:
            registry.add(name)
    assert caught.value.existing in names
    assert caught.value.incoming in names
    assert "is already used by" in str(caught.value)


def test_registry_add_is_idempotent_and_discard_forgets() -> None:
    registry = WireNames("mcp")

    assert registry.add("a:b:c") == registry.add("a:b:c") == "a.b.c"
    assert len(registry) == 1 and "a:b:c" in registry
    registry.discard("a:b:c")
    assert registry.canonical("a.b.c") is None
    assert registry.wire("a:b:c") is None
    assert len(registry) == 0


@pytest.mark.parametrize(
    "wire",
    ["acme__crm", "acme__crm__x__y", "acme__crm__-_zz-", "acme__crm__-_061-", "acme:crm:x", "", "a__b__-_-"],
)
def test_wire_names_that_are_not_encodings_do_not_resolve(wire: str) -> None:
    assert from_wire(wire) is None


@pytest.mark.parametrize("name", ["acme:crm", "acme::x", ":crm:x", "acme:crm:"])
def test_malformed_canonical_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidCanonicalName):
        to_wire(name)


def test_split_and_join() -> None:
    assert split_canonical("acme:crm:ns:tool") == ("acme", "crm", "ns:tool")
    assert join_canonical("acme", "crm", "tool") == "acme:crm:tool"
    with pytest.raises(InvalidCanonicalName):
        join_canonical("ac:me", "crm", "tool")


def test_unknown_profile_is_named() -> None:
    with pytest.raises(ValueError, match="unknown wire name profile 'dotted'"):
        to_wire("a:b:c", "dotted")  # type: ignore[arg-type]
