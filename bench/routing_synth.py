"""MCP-style requests written from the tools' own descriptions, to tune on beside the dev splits.

LiveMCPBench's dev split has 28 requests: too few to choose weights without fitting noise, and
the held-out requests must never be read. These synthetic requests come from the tool catalog
alone (the tool pool is public and the same for every split), by fixed rules:

- a task uses one to three tools of one server, and sometimes one more of another server
  (real tasks chain tools of one server, and now and then of two);
- each step is the first sentence of a tool's description, its opening boilerplate ("This tool",
  "Use this to") cut, and each word of the tool's own name dropped with probability 1/2 (people
  describe what they want, they rarely name the tool);
- steps are joined the way requests chain them ("..., then ...", "... Finally, ...").

Gold: the tools used; tools of the same name on several servers form one group, as in the
benchmark. No query, dev or held-out, is read to write them, so they cannot leak one; what they
do not have is the real requests' indirection ("recommend a starter team"), so they favour
lexical matching and are weighed as one set among three when tuning (`routing_eval.py --synthetic`).

Run: .venv/bin/python bench/routing_synth.py --set livemcpbench --n 300 > synth.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from colonnade.routing.benchmark import BenchmarkQuery, load_tools
from colonnade.routing.documents import ToolDoc
from colonnade.routing.tokenize import split_identifier

DEFAULT_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SEED = 20261124
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_BOILERPLATE = re.compile(
    r"^(?:this tool|the tool|tool to|use this tool to|use this to|a tool that|a tool to|allows? (?:you )?to|"
    r"this function|function to|used to)\s+",
    re.IGNORECASE,
)
_OPENERS = ("", "I need to ", "Please ", "Can you ", "Help me ", "I want to ")
_LINKS = (", then ", ". After that, ", " and ", ". Then ", ". Finally, ")
_MAX_WORDS = 25


def usable(doc: ToolDoc) -> bool:
    """A tool whose description can become an English request step."""
    text = doc.description or doc.summary
    return len(text.split()) >= 4 and not _CJK.search(text)


def step(doc: ToolDoc, rng: random.Random) -> str:
    """One request step from a tool's description."""
    text = doc.description or doc.summary
    first = _SENTENCE.split(text.strip())[0]
    first = _BOILERPLATE.sub("", first).rstrip(".")
    name_words = {w.lower() for w in split_identifier(doc.name)}
    kept = [w for w in first.split() if w.lower().strip(",.:;()") not in name_words or rng.random() < 0.5]
    words = (kept or first.split())[:_MAX_WORDS]
    sentence = " ".join(words)
    return sentence[:1].lower() + sentence[1:]


def synthetic_queries(docs: Sequence[ToolDoc], n: int, seed: int = SEED) -> list[BenchmarkQuery]:
    """`n` requests with their gold groups, the same for the same tools and seed."""
    rng = random.Random(seed)
    by_server: dict[str, list[ToolDoc]] = defaultdict(list)
    same_name: dict[str, list[str]] = defaultdict(list)
    for doc in docs:
        same_name[doc.name].append(doc.id)
        if usable(doc):
            by_server[doc.server].append(doc)
    servers = sorted(by_server)
    if not servers:
        return []
    queries: list[BenchmarkQuery] = []
    for i in range(n):
        server = rng.choice(servers)
        count = min(len(by_server[server]), rng.choices((1, 2, 3), weights=(4, 4, 2))[0])
        tools = rng.sample(by_server[server], count)
        if len(servers) > 1 and rng.random() < 0.35:
            other = rng.choice([s for s in servers if s != server])
            tools.append(rng.choice(by_server[other]))
        text = rng.choice(_OPENERS) + step(tools[0], rng)
        for doc in tools[1:]:
            text += rng.choice(_LINKS) + step(doc, rng)
        groups = tuple(dict.fromkeys(tuple(sorted(same_name[doc.name])) for doc in tools))
        queries.append(BenchmarkQuery(f"synth-{i}", text[:1].upper() + text[1:] + ".", groups))
    return queries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument("--set", default="livemcpbench", help="whose tools.jsonl to write from")
    parser.add_argument("--n", type=int, default=300, help="requests to write (default 300)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    docs = load_tools(args.benchmarks / args.set / "tools.jsonl")
    for query in synthetic_queries(docs, args.n, args.seed):
        row = {"id": query.id, "query": query.query, "gold_groups": [list(g) for g in query.groups]}
        row["gold"] = [tool for group in query.groups for tool in group]
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
