from __future__ import annotations

import pytest

from colonnade.contracts.semver import parse_range, parse_semver


def test_numeric_parts_compare_as_numbers_not_text() -> None:
    assert parse_semver("1.10.0") > parse_semver("1.9.0")
    assert parse_semver("10.0.0") > parse_semver("9.99.99")
    assert parse_semver("1.0.10") > parse_semver("1.0.9")


def test_prerelease_precedence_follows_semver_spec() -> None:
    # The ordering example given by semver.org, item 11.
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    assert sorted(reversed(ordered), key=parse_semver) == ordered


def test_build_metadata_does_not_change_precedence() -> None:
    assert parse_semver("1.0.0+build.9") > parse_semver("1.0.0-rc.1")
    assert parse_semver("1.0.1") > parse_semver("1.0.0+build.9")


def test_next_patch_suggests_a_later_release() -> None:
    assert parse_semver("1.2.3").next_patch() == "1.2.4"
    assert parse_semver("2.0.0-rc.1").next_patch() == "2.0.0"
    assert parse_semver("2.0.0-rc.1").next_patch() != "2.0.0-rc.1"


@pytest.mark.parametrize("text", ["1.0", "v1.0.0", "01.0.0", "1.0.0-", ""])
def test_rejects_text_that_is_not_a_version(text: str) -> None:
    with pytest.raises(ValueError, match="not a semantic version"):
        parse_semver(text)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("1.2.0", ["1.2.0"]),
        ("^1.2", ["1.2.0", "1.10.1"]),
        ("~1.2", ["1.2.0"]),
        ("1.x", ["1.0.0", "1.2.0", "1.10.1"]),
        ("*", ["0.9.0", "1.0.0", "1.2.0", "1.10.1", "2.0.0", "2.1.0"]),
        (">=1.0.0 <2.0.0", ["1.0.0", "1.2.0", "1.10.1"]),
        ("^1 || ^2", ["1.0.0", "1.2.0", "1.10.1", "2.0.0", "2.1.0"]),
        ("2.1.0-rc.1", ["2.1.0-rc.1"]),
        ("^0.9", ["0.9.0"]),
    ],
)
def test_ranges_match_like_npm(spec: str, expected: list[str]) -> None:
    versions = ["0.9.0", "1.0.0", "1.2.0", "1.10.1", "2.0.0", "2.1.0-rc.1", "2.1.0"]
    assert [v for v in versions if parse_range(spec).matches(v)] == expected


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3.4.5", "^", ">=x.y", "1 ||"])
def test_bad_ranges_say_what_is_wrong(bad: str) -> None:
    with pytest.raises(ValueError, match=r"range|version"):
        parse_range(bad)
