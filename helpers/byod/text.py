"""A labelled text file → trained light classifier → :class:`~helpers.benchmark.task.ShiftTask` (``kind="text"``).

File format
-----------
A ``.csv`` (comma-separated, header row) or ``.jsonl`` (one JSON object per line) with three columns:

* ``text``  -- the input text;
* ``label`` -- the class, any value (strings or integers); the distinct values are sorted (integers
  numerically) and mapped to ``0..K-1``, the list of original values is kept in ``task.info["label_names"]``;
* ``split`` -- ``train`` (training rows), ``reference`` (or ``val`` / ``validation``: the labelled
  in-distribution held-out set) or any other value, which names a target (shifted) set.

What happens
------------
1. a text model of :func:`helpers.models.build_model` (``"embsum"`` by default: mean of word embeddings, then a
   linear layer; also ``"bow"``, ``"textcnn"``, ``"lstm"``, ``"tfidf_mlp"``) is trained on the ``train`` rows
   with :func:`helpers.training.fit` (seeded, deterministic on CPU);
2. its logits (and penultimate features where the model has them) are computed on the reference and on every
   target set;
3. a meta-set (paper 5, Algorithm 1) is made of seeded perturbations of the reference texts
   (:func:`helpers.data.metaset.text_metaset`: every perturbation of :mod:`helpers.data.text_perturb` at every
   severity, plus random compositions), named ``meta_<perturbation>-<severity>``;
4. everything is cached with :func:`helpers.cache.cached_arrays` under the file's sha256 + options + seed, so a
   second call with the same file and options trains nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from helpers.benchmark.task import ShiftTask
from helpers.byod.common import (
    check_options,
    encode_labels,
    label_map,
    meta_subset,
    pack_sets,
    progress,
    sha256_file,
    split_role,
    unpack_task,
)
from helpers.cache import cached_arrays
from helpers.errors import InputValidationError

__all__ = ["TEXT_OPTIONS", "TEXT_MODELS", "read_text_table", "load_text_task"]

TEXT_MODELS = ("embsum", "bow", "textcnn", "lstm", "tfidf_mlp")
#: Options of ``load_task(kind="text")`` and their defaults.
TEXT_OPTIONS: dict[str, Any] = {
    "name": None,  # task name, default "byod/<file stem>"
    "model": "embsum",  # one of TEXT_MODELS
    "epochs": 8,
    "batch_size": 32,
    "lr": 3e-3,
    "max_len": 128,  # words kept per text
    "min_freq": 1,  # vocabulary: words seen at least this often in the training texts
    "max_vocab": 20000,
    "tfidf_features": 5000,  # only for model="tfidf_mlp"
    "meta": True,  # build the meta-set of perturbed reference texts
    "meta_perturbations": None,  # default: every perturbation of helpers.data.text_perturb
    "meta_severities": (1, 2, 3, 4, 5),
    "meta_compositions": 5,
    "meta_n": None,  # reference examples per meta set (seeded subset); None: all
    "progress": True,  # tqdm bars over training and the meta sets (False: silent)
    "refresh": False,  # recompute even if cached
}
_NOT_IN_KEY = ("name", "refresh", "progress")
COLUMNS = ("text", "label", "split")


def read_text_table(path: Path) -> pd.DataFrame:
    """The ``text``, ``label``, ``split`` columns of a ``.csv`` or ``.jsonl`` file (other columns are dropped)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            frame = pd.read_csv(path, keep_default_na=False, dtype={"text": str, "split": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise InputValidationError(f"{path.name}: not a readable CSV file ({exc})") from exc
    elif suffix in (".jsonl", ".ndjson"):
        rows = []
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputValidationError(f"{path.name}, line {i}: not valid JSON ({exc.msg})") from exc
                if not isinstance(row, dict):
                    raise InputValidationError(
                        f"{path.name}, line {i}: expected a JSON object, got {type(row).__name__}"
                    )
                rows.append(row)
        frame = pd.DataFrame(rows)
    else:
        raise InputValidationError(
            f"{path.name}: expected a .csv or .jsonl file, got {suffix or 'no suffix'}"
        )
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputValidationError(
            f"{path.name}: missing column(s) {missing}; expected columns text, label, split "
            f"(found {[str(c) for c in frame.columns]})"
        )
    if frame.empty:
        raise InputValidationError(f"{path.name}: no rows")
    frame = frame[list(COLUMNS)].copy()
    frame["text"] = [
        "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in frame["text"]
    ]
    frame["split"] = [str(v).strip() for v in frame["split"]]
    return frame


def _roles(frame: pd.DataFrame, name: str) -> pd.Series:
    roles = frame["split"].map(split_role)
    for role, what in (
        ("train", "'train'"),
        ("reference", "'reference' (or 'val')"),
        ("target", "any other value"),
    ):
        if not (roles == role).any():
            raise InputValidationError(
                f"{name}: no {role} rows; expected split values 'train', 'reference' (or 'val') and at least one "
                f"target set name, missing {what} (found {sorted(frame['split'].unique())[:20]})"
            )
    return roles


def _train_text_model(
    texts: Sequence[str], labels: np.ndarray, *, n_classes: int, seed: int, opts: dict
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """Train ``opts["model"]`` on ``texts``; return texts → ``{"logits"[, "features"]}`` (monkeypatched in tests)."""
    from helpers.models import build_model
    from helpers.models.text import Vocab
    from helpers.models.zoo import train_text_classifier
    from helpers.training import TrainSettings, features_and_logits, fit, seed_everything

    name = opts["model"]
    seed_everything(seed)
    settings = TrainSettings(epochs=int(opts["epochs"]), batch_size=int(opts["batch_size"]), lr=float(opts["lr"]),
                             seed=seed)  # fmt: skip
    if name == "tfidf_mlp":
        from sklearn.feature_extraction.text import TfidfVectorizer

        vec = TfidfVectorizer(max_features=int(opts["tfidf_features"])).fit(list(texts))

        def encode(xs: Sequence[str]) -> np.ndarray:
            return vec.transform(list(xs)).toarray().astype(np.float32)

        model = build_model(name, in_features=len(vec.vocabulary_), num_classes=n_classes)
        label = f"training the TF-IDF classifier on your {len(texts)} texts" if opts["progress"] else False
        fit(model, (encode(texts), np.asarray(labels, dtype=np.int64)), settings.replace(progress=label))
        model.eval()
        return lambda xs: features_and_logits(model, encode(xs))
    vocab = Vocab.build(texts, min_freq=int(opts["min_freq"]), max_size=int(opts["max_vocab"]))
    # the zoo seeds the initial weights with torch.manual_seed(seed), as seed_everything(seed) above did
    label = f"training the {name} on your {len(texts)} texts" if opts["progress"] else False
    _, outputs = train_text_classifier(
        name, texts, labels, settings.replace(progress=label), vocab=vocab, max_len=int(opts["max_len"]),
        num_classes=n_classes,
    )  # fmt: skip
    return outputs


def load_text_task(path: Path, *, seed: int = 0, **options: Any) -> ShiftTask:
    """Train on the ``train`` rows of ``path`` and return the ``"byod"`` task (see the module docstring).

    Options (keyword-only) and defaults are :data:`TEXT_OPTIONS`.
    """
    from helpers.data.metaset import apply_text_shift, text_metaset
    from helpers.data.text_perturb import list_text_perturbations

    opts = check_options("text", options, TEXT_OPTIONS)
    if opts["model"] not in TEXT_MODELS:
        raise InputValidationError(
            f"model: expected one of {list(TEXT_MODELS)} for text, got {opts['model']!r}"
        )
    frame = read_text_table(path)
    roles = _roles(frame, path.name)
    label_names, mapping = label_map(frame["label"].tolist())
    if frame.loc[roles == "train", "label"].astype(str).nunique() < 2:
        raise InputValidationError(
            f"{path.name}: the train rows have a single class ({label_names}); expected at least 2 classes to train on"
        )
    y = encode_labels(frame["label"].tolist(), mapping)
    perturbations = list(opts["meta_perturbations"] or list_text_perturbations())
    specs = (
        text_metaset(
            fit_names=perturbations,
            severities=list(opts["meta_severities"]),
            n_compositions=int(opts["meta_compositions"]),
            seed=seed,
        )
        if opts["meta"]
        else []
    )
    texts = frame["text"].tolist()
    train_idx = np.flatnonzero(roles == "train")
    ref_idx = np.flatnonzero(roles == "reference")
    target_names = list(dict.fromkeys(frame.loc[roles == "target", "split"]))
    sub = meta_subset(len(ref_idx), opts["meta_n"], seed)

    def compute() -> dict[str, np.ndarray]:
        outputs = _train_text_model(
            [texts[i] for i in train_idx], y[train_idx], n_classes=len(label_names), seed=seed, opts=opts
        )
        sets, set_roles = {}, {}
        ref_texts = [texts[i] for i in ref_idx]
        sets["reference"], set_roles["reference"] = {**outputs(ref_texts), "labels": y[ref_idx]}, "reference"
        for t in target_names:
            idx = np.flatnonzero(frame["split"].to_numpy() == t)
            sets[t], set_roles[t] = {**outputs([texts[i] for i in idx]), "labels": y[idx]}, "target"
        meta_texts, meta_y = [ref_texts[i] for i in sub], y[ref_idx][sub]
        for spec in progress(specs, enabled=bool(opts["progress"]), desc="meta-set"):
            m = f"meta_{spec.name}"
            sets[m], set_roles[m] = {**outputs(apply_text_shift(meta_texts, spec)), "labels": meta_y}, "meta"
        return pack_sets(sets, set_roles)

    key_opts = {k: (list(v) if isinstance(v, tuple) else v) for k, v in opts.items() if k not in _NOT_IN_KEY}
    digest = sha256_file(path)
    arrays = cached_arrays(
        "byod",
        {"kind": "text", "sha256": digest, "seed": int(seed), "options": key_opts, "version": 1},
        compute,
        refresh=bool(opts["refresh"]),
        code=("helpers.byod", "helpers.models", "helpers.training", "helpers.data"),
    )
    info = {
        "kind": "text",
        "source": str(path),
        "sha256": digest,
        "model": opts["model"],
        "label_names": label_names,
        "n_train": int(len(train_idx)),
        "seed": int(seed),
    }
    return unpack_task(arrays, name=opts["name"] or f"byod/{path.stem}", info=info)
