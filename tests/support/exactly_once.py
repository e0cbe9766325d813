"""What the exactly-once chaos tests check, once the dust has settled: the ledger and the answers.

Answers are CallResult documents (JSON), None when the caller got no answer at all (the gateway
died mid-call). `first` holds the answers of the chaos phase, `final` the answers to resends
made afterwards until each was definite. The rules:

- no key has two effects in the backend's ledger;
- every key answered `success` during the chaos is answered the same output again (a replay);
- every key answered terminally during the chaos is answered the same code again: a terminal
  answer is final, so its resend agrees with it;
- every final answer is definite: `success` (then the ledger has its one effect) or the terminal
  `S-TOOL-EFFECT-UNKNOWN` (the ledger has zero or one);
- no answer was ever `S-TOOL-INTERNAL`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFINITE", "NOT_YET", "outcome_of", "verify_exactly_once"]

Answer = Mapping[str, Any]
# Answers a client resends: the key is still held, the outcome was not recorded, the store was away, or
# admission control refused the call before anything ran (a restarted gateway flooded with resends).
NOT_YET = frozenset(
    {
        "R-CAP-KEY-IN-PROGRESS",
        "R-TIMEOUT-UNRECORDED",
        "R-TIMEOUT-STORE",
        "R-CAP-STORE-UNAVAILABLE",
        "R-CAP-STORE-UNRECORDED",
        "R-CAP-OVERLOAD",
    }
)
DEFINITE = frozenset({"success", "S-TOOL-EFFECT-UNKNOWN"})


def outcome_of(answer: Answer | None) -> str:
    """`success`, the error code, or `no answer`."""
    if answer is None:
        return "no answer"
    if answer["status"] == "success":
        return "success"
    return str(answer["error"]["code"])


def verify_exactly_once(
    first: Mapping[str, Answer | None],
    final: Mapping[str, Answer],
    ledger: list[dict[str, Any]],
    kinds: Mapping[str, str],
) -> Counter[str]:
    """Assert the rules above; `kinds` maps each key to its ledger kind. Returns a tally to print."""
    effects = Counter((entry["kind"], entry["note"]) for entry in ledger if "note" in entry)
    doubles = sorted(key for key, kind in kinds.items() if effects[(kind, key)] > 1)
    assert doubles == [], f"{len(doubles)} keys executed twice: {doubles[:10]}"
    tally: Counter[str] = Counter()
    for key, kind in kinds.items():
        before, after = first[key], final[key]
        tally[f"first: {outcome_of(before)}"] += 1
        tally[f"final: {outcome_of(after)}"] += 1
        assert "S-TOOL-INTERNAL" not in (outcome_of(before), outcome_of(after)), (key, before, after)
        assert outcome_of(after) in DEFINITE, (key, after)
        if before is not None and before["status"] == "terminal_error":
            assert outcome_of(after) == outcome_of(before), (key, before, after)
        if before is not None and before["status"] == "success":
            assert after["status"] == "success" and after["output"] == before["output"], (key, before, after)
        if after["status"] == "success":
            assert effects[(kind, key)] == 1, (key, after, effects[(kind, key)])
        tally[f"{kind}s in ledger"] += effects[(kind, key)]
    return tally
