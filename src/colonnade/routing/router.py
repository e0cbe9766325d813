"""The router: which few tools, out of the whole catalog, fit this conversation now.

Retrieval proposes candidates among the tools the caller may call; re-ranking adds what text
alone cannot know (the caller's domain, tools the session already used, tools that past sessions
used together); selection keeps the list varied (a per-API cap) and whole (bundles). Every
decision says why each tool is there and how sure the router is, and is logged as one event.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from colonnade.config import RoutingSettings
from colonnade.routing.bundles import Bundles
from colonnade.routing.context import RoutingContext, build_query, names, words
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.documents import ToolDoc
from colonnade.routing.index import Hit
from colonnade.routing.learning import CoOccurrence

__all__ = [
    "CONFIDENCE_TAIL_RANK",
    "NO_WORD_NOTE",
    "WORD_SHARE",
    "Boosts",
    "CallerAllowed",
    "Router",
    "RoutingDecision",
]

CONFIDENCE_TAIL_RANK = 24
"""Confidence compares the best hit with the hit at this rank (three times the default `top_k`)."""

WORD_SHARE = 0.5
"""With a dense model, how much of the confidence the best hit's sharing a word with the request
carries; its similarity of meaning (the dense signal, in [0, 1]) carries the rest. A hit found by
one signal alone is never fully sure: a lone common word, or meaning without a word in common."""
NO_WORD_NOTE = "no word of the request matches the best tool: it is ranked by similarity of meaning alone"

logger = logging.getLogger("colonnade.routing")

CallerAllowed: TypeAlias = Collection[str] | Callable[[str], bool] | None
"""What a caller may call: a set of tool ids, a predicate on a tool id, or None for everything."""


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    """The router's answer: tools best first (canonical names), with scores and reasons."""

    selected: list[str]
    scores: dict[str, float]
    reasons: dict[str, list[str]]
    query_used: str
    confidence: float
    fallback_used: bool
    confidence_note: str = ""
    """Why the confidence is low although a tool was found (empty when nothing needs saying)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "selected": list(self.selected),
            "scores": dict(self.scores),
            "reasons": {tool: list(why) for tool, why in self.reasons.items()},
            "query_used": self.query_used,
            "confidence": self.confidence,
            "fallback_used": self.fallback_used,
            "confidence_note": self.confidence_note,
        }


@dataclass(frozen=True, slots=True)
class Boosts:
    """Re-ranking weights, in units of the best retrieval score of the query (which counts 1.0)."""

    domain: float = 0.3
    session: float = 0.2
    co_occurrence: float = 0.3
    co_anchors: int = 3
    strong: float = 0.8
    """A tool scoring at least this share of the best is a strong match: it pulls in its bundles
    and is not held back by the per-API cap (the query asks for exactly that API's tools)."""
    detected: float | None = None
    """When set, an API whose tools as a whole fit the request at least this share as well as the
    best API's (`Hit.domain`, `domains.py`; needs a domain fusion weight above 0) is detected: the
    request is about it, so the per-API cap does not hold its tools back, as if the request had
    named it. Off by default: on the dev splits it lowered LiveMCPBench Recall@10 (61.6 -> 61.0
    with 1.0, the best API only), since a task that needs several APIs then loses the places the
    cap keeps for the others."""


@dataclass(slots=True)
class _Candidate:
    id: str
    doc: ToolDoc
    retrieval: float = 0.0
    boost: float = 0.0
    reasons: list[str] = field(default_factory=list)
    domain: float = 0.0

    @property
    def score(self) -> float:
        return self.retrieval + self.boost


@dataclass(slots=True)
class _Selection:
    """The tools chosen so far, in order, with the per-API counts the cap is checked against."""

    ids: list[str] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    per_server: Counter[str] = field(default_factory=Counter)
    ranked_picks: int = 0

    def add(self, tool_id: str, server: str, reasons: list[str]) -> None:
        self.ids.append(tool_id)
        self.reasons[tool_id] = reasons
        self.per_server[server] += 1

    def __contains__(self, tool_id: str) -> bool:
        return tool_id in self.reasons


DecisionObserver = Callable[["RoutingDecision", float], None]


class Router:
    """Answers `route(context) -> RoutingDecision`; the gateway and `colonnade route rank` share it."""

    def __init__(
        self,
        corpus: ToolCorpus,
        *,
        top_k: int = 8,
        per_server_cap: int = 3,
        confidence_threshold: float = 0.1,
        fallback: Sequence[str] = (),
        bundles: Bundles | None = None,
        learning: CoOccurrence | None = None,
        boosts: Boosts | None = None,
        context_turns: int = 6,
        pool: int = 50,
    ) -> None:
        if top_k < 1 or per_server_cap < 1 or pool < 1:
            raise ValueError("top_k, per_server_cap and pool must be at least 1")
        if not 0.0 <= confidence_threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be within [0, 1], got {confidence_threshold}")
        self.corpus = corpus
        self.top_k = top_k
        self.per_server_cap = per_server_cap
        self.confidence_threshold = confidence_threshold
        self.fallback = tuple(dict.fromkeys(fallback))
        self.bundles = bundles or Bundles()
        self.learning = learning
        self.boosts = boosts or Boosts()
        self.context_turns = context_turns
        self.pool = pool
        self.observer: DecisionObserver | None = None
        """Told of every decision and how long it took (the gateway's routing metrics)."""

    @classmethod
    def from_settings(
        cls, settings: RoutingSettings, corpus: ToolCorpus, *, learning: CoOccurrence | None = None
    ) -> Router:
        return cls(
            corpus,
            top_k=settings.top_k,
            per_server_cap=settings.per_server_cap,
            confidence_threshold=settings.confidence_threshold,
            fallback=settings.fallback_tools,
            bundles=Bundles.from_mapping(settings.bundles),
            learning=learning,
            context_turns=settings.context_turns,
        )

    def route(
        self,
        context: RoutingContext,
        *,
        caller_allowed: CallerAllowed = None,
        domain_hints: Iterable[str] = (),
        session_tools: Iterable[str] = (),
        k: int | None = None,
    ) -> RoutingDecision:
        """The top `k` tools (default `top_k`) for a query or a conversation, for this caller."""
        started = time.perf_counter()
        limit = self.top_k if k is None else k
        if limit < 1:
            raise ValueError(f"k must be at least 1, got {limit}")
        query = build_query(context, turns=self.context_turns)
        allowed = self._allowed(caller_allowed)
        permitted: Callable[[str], bool] = (
            self.corpus.__contains__ if allowed is None else (lambda i: i in allowed and i in self.corpus)
        )
        wanted = max(self.pool, 3 * limit + 1, CONFIDENCE_TAIL_RANK + 1)
        hits = self.corpus.search(query, wanted, allowed=allowed) if query else []
        query_words = words(query)
        session = [t for t in dict.fromkeys(session_tools) if permitted(t)]
        candidates = self._candidates(hits, session, permitted)
        self._boost(candidates, [words(h) for h in domain_hints if h.strip()], session, permitted)
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, -c.retrieval, c.id))
        confidence = _confidence(hits)
        note = NO_WORD_NOTE if hits and not hits[0].matched_terms else ""
        fallback = [t for t in self.fallback if permitted(t)]
        if confidence < self.confidence_threshold and fallback:
            decision = self._fallback(fallback, candidates, query, confidence, note)
        else:
            selection = self._select(ranked, limit, query_words, permitted)
            decision = RoutingDecision(
                selected=selection.ids,
                scores={t: round(candidates[t].score if t in candidates else 0.0, 4) for t in selection.ids},
                reasons=selection.reasons,
                query_used=query,
                confidence=confidence,
                fallback_used=False,
                confidence_note=note,
            )
        self._log(decision, ranked, limit, started)
        if self.observer is not None:
            self.observer(decision, time.perf_counter() - started)
        return decision

    # -- candidates and boosts ---------------------------------------------------------------

    def _allowed(self, caller_allowed: CallerAllowed) -> Collection[str] | None:
        if caller_allowed is None:
            return None
        if callable(caller_allowed):
            predicate = caller_allowed
            return frozenset(i for i in list(self.corpus.ids()) if predicate(i))
        return caller_allowed if isinstance(caller_allowed, set | frozenset) else frozenset(caller_allowed)

    def _candidates(
        self, hits: list[Hit], session: list[str], permitted: Callable[[str], bool]
    ) -> dict[str, _Candidate]:
        candidates: dict[str, _Candidate] = {}
        best = max((h.score for h in hits), default=0.0)
        for hit in hits:
            doc = self.corpus.doc(hit.id)
            if doc is None or not permitted(hit.id):
                continue
            relative = hit.score / best if best > 0 else 0.0
            candidates[hit.id] = _Candidate(
                hit.id, doc, relative, reasons=[_retrieval_reason(hit, relative)], domain=hit.domain
            )
        for tool_id in session:
            self._candidate(candidates, tool_id)
        return candidates

    def _candidate(self, candidates: dict[str, _Candidate], tool_id: str) -> _Candidate | None:
        found = candidates.get(tool_id)
        if found is None:
            doc = self.corpus.doc(tool_id)
            if doc is None:
                return None
            found = candidates[tool_id] = _Candidate(tool_id, doc)
        return found

    def _boost(
        self,
        candidates: dict[str, _Candidate],
        hints: list[frozenset[str]],
        session: list[str],
        permitted: Callable[[str], bool],
    ) -> None:
        """Domain hints (matched against a tool's API name and tags), the session, co-occurrence.

        Words of the query that name a tag get no boost here: the index already scores tags.
        """
        boosts = self.boosts
        for candidate in candidates.values() if hints else ():
            labels = _label_words(candidate.doc)
            hint = next((h for h in hints if h <= labels), None)
            if hint is not None:
                candidate.boost += boosts.domain
                candidate.reasons.append(f"domain hint '{' '.join(sorted(hint))}' (+{boosts.domain:g})")
        for tool_id in session:
            candidates[tool_id].boost += boosts.session
            candidates[tool_id].reasons.append(f"used earlier in this session (+{boosts.session:g})")
        self._boost_co_occurrence(candidates, session, permitted)

    def _boost_co_occurrence(
        self, candidates: dict[str, _Candidate], session: list[str], permitted: Callable[[str], bool]
    ) -> None:
        """Tools often used with what the session used, or with the strongest retrieval hits."""
        learned = self.learning
        if learned is None or not len(learned):
            return
        top_hits = sorted(candidates.values(), key=lambda c: -c.retrieval)[: self.boosts.co_anchors]
        anchors = {tool_id: 1.0 for tool_id in session}
        for hit in top_hits:
            anchors.setdefault(hit.id, hit.retrieval)
        best: dict[str, tuple[float, str]] = {}
        for anchor, weight in anchors.items():
            for partner, affinity in learned.neighbours(anchor):
                strength = weight * affinity
                if partner != anchor and permitted(partner) and strength > best.get(partner, (0.0, ""))[0]:
                    best[partner] = (strength, anchor)
        for partner, (strength, anchor) in best.items():
            candidate = self._candidate(candidates, partner)
            if candidate is None:
                continue
            boost = self.boosts.co_occurrence * strength
            candidate.boost += boost
            candidate.reasons.append(f"often used with {anchor} (+{boost:.2f})")

    # -- selection ---------------------------------------------------------------------------

    def _select(
        self,
        ranked: list[_Candidate],
        limit: int,
        query_words: frozenset[str],
        permitted: Callable[[str], bool],
    ) -> _Selection:
        selection = _Selection()
        by_id = {c.id: c for c in ranked}
        for bundle in self.bundles.named_in(query_words):
            for member in bundle.tools:
                self._add_member(
                    selection, by_id, member, permitted, f"bundle '{bundle.name}' named in the query"
                )
        named: dict[str, bool] = {}
        top = ranked[0].score if ranked else 0.0
        for candidate in ranked:
            if selection.ranked_picks >= limit:
                break
            if candidate.id in selection:
                continue
            server = candidate.doc.server
            if server not in named:
                named[server] = names(query_words, server) if server else True
                detected = self.boosts.detected
                if not named[server] and detected is not None and candidate.domain >= detected:
                    named[server] = True
                    candidate.reasons.append(f"the request is about API {server} (no per-API cap)")
            strong = top > 0 and candidate.score >= self.boosts.strong * top
            if not (named[server] or strong) and selection.per_server[server] >= self.per_server_cap:
                continue
            selection.add(candidate.id, server, candidate.reasons)
            selection.ranked_picks += 1
            if strong:
                for bundle in self.bundles.of(candidate.id):
                    reason = f"bundle '{bundle.name}' with {candidate.id}"
                    for member in bundle.tools:
                        self._add_member(selection, by_id, member, permitted, reason)
        return selection

    def _add_member(
        self,
        selection: _Selection,
        by_id: dict[str, _Candidate],
        tool_id: str,
        permitted: Callable[[str], bool],
        reason: str,
    ) -> None:
        if tool_id in selection or not permitted(tool_id):
            return
        doc = self.corpus.doc(tool_id)
        if doc is None:
            return
        earlier = by_id[tool_id].reasons if tool_id in by_id else []
        selection.add(tool_id, doc.server, [reason, *earlier])

    def _fallback(
        self, fallback: list[str], candidates: dict[str, _Candidate], query: str, confidence: float, note: str
    ) -> RoutingDecision:
        why = f"fallback: confidence {confidence:.2f} is below the threshold {self.confidence_threshold:.2f}"
        return RoutingDecision(
            selected=fallback,
            scores={t: round(candidates[t].score if t in candidates else 0.0, 4) for t in fallback},
            reasons={t: [why] for t in fallback},
            query_used=query,
            confidence=confidence,
            fallback_used=True,
            confidence_note=note,
        )

    # -- trace ---------------------------------------------------------------------------------

    def _log(self, decision: RoutingDecision, ranked: list[_Candidate], limit: int, started: float) -> None:
        if not logger.isEnabledFor(logging.INFO):
            return
        candidates = [
            {"id": c.id, "retrieval": round(c.retrieval, 4), "score": round(c.score, 4)}
            for c in ranked[: self.pool]
        ]
        logger.info(
            "routing decision: %d tools, confidence %.2f%s",
            len(decision.selected),
            decision.confidence,
            " (fallback)" if decision.fallback_used else "",
            extra={
                "event": "routing.decision",
                "query": decision.query_used,
                "k": limit,
                "candidates": candidates,
                "selected": decision.selected,
                "scores": decision.scores,
                "reasons": decision.reasons,
                "confidence": decision.confidence,
                "fallback_used": decision.fallback_used,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            },
        )


def _confidence(hits: list[Hit]) -> float:
    """How clearly the best hit stands out from the tail of the candidates, in [0, 1].

    The tail is the hit at rank `CONFIDENCE_TAIL_RANK`, whatever `k` the caller asked for: how sure
    the router is of a query does not change with how many tools are shown. 1.0 when few tools
    match at all (nothing scores that far down), near 0 when dozens of tools score like the best
    one (a vague query), 0 without any hit. Standing out among few candidates says little on its
    own, so with a dense model the best hit's evidence bounds it too: `WORD_SHARE` for sharing a
    word with the request, the rest in proportion to its similarity of meaning.
    """
    if not hits:
        return 0.0
    scores = sorted((h.score for h in hits), reverse=True)
    best = scores[0]
    if best <= 0:
        return 0.0
    tail = scores[CONFIDENCE_TAIL_RANK] if len(scores) > CONFIDENCE_TAIL_RANK else 0.0
    separation = min(1.0, max(0.0, (best - tail) / best))
    top = hits[0]
    if top.dense is not None:
        evidence = (WORD_SHARE if top.matched_terms else 0.0) + (1.0 - WORD_SHARE) * top.dense
        separation = min(separation, evidence)
    return round(separation, 4)


def _retrieval_reason(hit: Hit, relative: float) -> str:
    """`retrieval 0.93 (matched refund, invoice)`; the signals are named when dense is part of it."""
    parts = []
    if hit.dense is not None:
        parts.append(f"lexical {hit.lexical or 0.0:.2f}, dense {hit.dense:.2f}")
    if hit.matched_terms:
        parts.append("matched " + ", ".join(hit.matched_terms[:6]))
    detail = f" ({'; '.join(parts)})" if parts else ""
    return f"retrieval {relative:.2f}{detail}"


def _label_words(doc: ToolDoc) -> frozenset[str]:
    """The words of a tool's API name and tags, which domain hints are matched against."""
    labels: set[str] = set(words(doc.server.split(":")[-1].split("/")[-1]))
    for tag in doc.tags:
        labels |= words(tag)
    return frozenset(labels)
