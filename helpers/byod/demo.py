"""Small generated datasets in the three byod formats, for the README's worked example and the tests.

None of the notebooks was written for them: a three-class "review" corpus whose target sets replace the words the
model was trained on by unseen synonyms, coloured shapes whose targets change colour or add noise, and random
logits whose accuracy falls with their noise.

>>> from helpers.byod.demo import make_text_csv
>>> path = make_text_csv("reviews.csv")            # doctest: +SKIP
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np

__all__ = [
    "text_rows",
    "make_text_csv",
    "make_text_jsonl",
    "make_image_folder",
    "logits_arrays",
    "make_logits_npz",
]

_WORDS = {
    "bad": (
        ["awful", "boring", "poor", "dull", "broken"],
        ["dreadful", "tedious", "shoddy", "lame", "faulty"],
    ),
    "good": (
        ["great", "lovely", "superb", "fun", "solid"],
        ["splendid", "charming", "stellar", "enjoyable", "sturdy"],
    ),
    "meh": (
        ["okay", "average", "fine", "plain", "middling"],
        ["passable", "ordinary", "adequate", "so-so", "mediocre"],
    ),
}
_NEUTRAL = "the a this it was is product film item really quite and but very overall i we".split()


def _review(rng: np.random.Generator, label: str, swap: float) -> str:
    """A bag of neutral words and 3 words of the label; each label word is an unseen synonym w.p. ``swap``."""
    seen, unseen = _WORDS[label]
    words = list(rng.choice(_NEUTRAL, size=8))
    for _ in range(3):
        pool = unseen if rng.random() < swap else seen
        words.insert(int(rng.integers(0, len(words) + 1)), str(rng.choice(pool)))
    return " ".join(words)


def text_rows(
    seed: int = 0, *, n_train: int = 300, n_ref: int = 150, n_target: int = 120, noise: float = 0.1
) -> list[dict]:
    """Rows (text, label, split); targets ``mild`` / ``strong`` / ``all new words`` of growing vocabulary shift.

    A fraction ``noise`` of the labels is replaced by a random one, so that even the reference is not perfect.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for split, n, swap in (
        ("train", n_train, 0.0),
        ("val", n_ref, 0.0),
        ("mild", n_target, 0.3),
        ("strong", n_target, 0.7),
        ("all new words", n_target, 1.0),
    ):
        for _ in range(n):
            label = str(rng.choice(list(_WORDS)))
            text = _review(rng, label, swap)
            if rng.random() < noise:
                label = str(rng.choice(list(_WORDS)))
            rows.append({"text": text, "label": label, "split": split})
    return rows


def make_text_csv(path: str | os.PathLike, rows: list[dict] | None = None, **kwargs) -> Path:
    """Write ``rows`` (default :func:`text_rows` with ``kwargs``) as a CSV with a header; return the path."""
    path = Path(path)
    rows = text_rows(**kwargs) if rows is None else rows
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def make_text_jsonl(path: str | os.PathLike, rows: list[dict] | None = None, **kwargs) -> Path:
    """Write ``rows`` (default :func:`text_rows` with ``kwargs``) as JSON lines; return the path."""
    path = Path(path)
    rows = text_rows(**kwargs) if rows is None else rows
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _shape(rng: np.random.Generator, cls: int, size: int, colour, noise: float) -> np.ndarray:
    """A ``size``-pixel RGB uint8 image: class 0 horizontal bar, 1 vertical bar, 2 square, on a dark background."""
    img = np.zeros((size, size, 3))
    a, b = sorted(rng.integers(2, size - 2, 2))
    b = max(b, a + 3)
    c = int(rng.integers(2, size - 4))
    if cls == 0:
        img[c : c + 3, a:b] = colour
    elif cls == 1:
        img[a:b, c : c + 3] = colour
    else:
        img[a : a + 5, c : c + 5] = colour
    img = img + rng.normal(0, noise, img.shape)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8)


def make_image_folder(
    root: str | os.PathLike, seed: int = 0, *, n_train: int = 40, n_other: int = 15, size: int = 16
) -> Path:
    """``root/<split>/<class>/*.png`` shapes; targets shift colour (``blue``) or add noise (``noisy``)."""
    from PIL import Image

    root = Path(root)
    rng = np.random.default_rng(seed)
    classes = ["hbar", "vbar", "square"]
    for split, n, colour, noise in (
        ("train", n_train, (1.0, 0.9, 0.2), 0.05),
        ("reference", n_other, (1.0, 0.9, 0.2), 0.05),
        ("blue", n_other, (0.2, 0.3, 1.0), 0.05),
        ("noisy", n_other, (1.0, 0.9, 0.2), 0.45),
    ):
        for k, cls in enumerate(classes):
            d = root / split / cls
            d.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                Image.fromarray(_shape(rng, k, size, colour, noise)).save(d / f"img {i:03d}.png")
    return root


def logits_arrays(seed: int = 0, *, k: int = 4, n: int = 200, n_meta: int = 4) -> dict[str, np.ndarray]:
    """Random logits whose accuracy falls with the set's noise level: reference, two targets and a meta-set."""
    rng = np.random.default_rng(seed)

    def one(noise: float) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, k, n)
        z = rng.normal(0, noise, (n, k))
        z[np.arange(n), y] += 2.0
        return z.astype(np.float32), y

    out = {}
    for name, noise in [("reference", 1.0), ("shift_a", 1.5), ("shift_b", 2.5)] + [
        (f"meta_m{i}", 1.0 + 0.5 * i) for i in range(n_meta)
    ]:
        out[f"{name}_logits"], out[f"{name}_labels"] = one(noise)
    return out


def make_logits_npz(path: str | os.PathLike, **kwargs) -> Path:
    """Save :func:`logits_arrays` with ``kwargs`` as an ``.npz`` archive; return the path."""
    path = Path(path)
    np.savez(path, **logits_arrays(**kwargs))
    return path
