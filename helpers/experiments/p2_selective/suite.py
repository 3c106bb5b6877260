"""Ten IMDb sentiment models of different families and sizes, for paper 2's selective-answering study.

Paper 2 (Mishra, Arunkumar & Baral, Section 2 "Experiment Details") trains BOW-SUM, W2V/GloVe-SUM, W2V/GloVe-CNN,
W2V/GloVe-LSTM, BERT-BASE, BERT-LARGE and RoBERTa-LARGE on IMDb and evaluates on IMDb test (ID) and SST-2 (OOD).
Here, with no hub downloads and a CPU, the analogues are (:data:`SUITE`):

============================  =====================================================================================
name                          model (paper analogue)
============================  =====================================================================================
``bow_sum``                   linear bag-of-words sum (BOW-SUM)
``embsum_random``             sum of 64-d word embeddings, random init (W2V-SUM with no pretraining)
``embsum_minilm``             sum of 384-d word embeddings initialised from MiniLM's WordPiece table (GloVe-SUM)
``cnn_random`` / ``cnn_minilm``    Kim CNN, random 64-d / MiniLM-initialised 384-d embeddings (W2V/GloVe-CNN)
``lstm_random`` / ``lstm_minilm``  biLSTM, random 64-d / MiniLM-initialised 384-d embeddings (W2V/GloVe-LSTM)
``minilm_frozen``             MiniLM-L6 encoder frozen, linear head trained on its mean-pooled features
``minilm_finetuned``          MiniLM-L6 fine-tuned end to end (BERT-BASE analogue)
``minilm3_finetuned``         the first 3 layers of MiniLM-L6, fine-tuned (a smaller transformer)
============================  =====================================================================================

OOD set: Rotten Tomatoes sentence polarity (Pang & Lee 2005), the short expert snippets SST-2 was built from.
Every model is checkpointed (``cache_dir()/checkpoints/02_selective/...``) and every prediction is cached with
:func:`helpers.cache.cached_arrays`, so re-running a notebook does not retrain or re-predict.  The frozen-encoder
model is trained on cached features (mathematically the same as training the head behind a frozen encoder, with the
encoder run once instead of every epoch).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from torch import nn

from helpers.cache import cached_arrays
from helpers.errors import InputValidationError, UnknownNameError
from helpers.estimators import softmax
from helpers.paths import cache_dir

__all__ = [
    "SUITE",
    "DESCRIPTIONS",
    "SuiteData",
    "SuiteConfig",
    "load_suite_data",
    "build_vocab",
    "suite_predictions",
    "predictions_frame",
]

SUITE: tuple[str, ...] = (
    "bow_sum",
    "embsum_random",
    "embsum_minilm",
    "cnn_random",
    "cnn_minilm",
    "lstm_random",
    "lstm_minilm",
    "minilm_frozen",
    "minilm_finetuned",
    "minilm3_finetuned",
)

DESCRIPTIONS: dict[str, str] = {
    "bow_sum": "bag-of-words sum (BOW-SUM)",
    "embsum_random": "embedding sum, random 64-d (W2V-SUM analogue)",
    "embsum_minilm": "embedding sum, MiniLM-init 384-d (GloVe-SUM analogue)",
    "cnn_random": "CNN, random 64-d embeddings",
    "cnn_minilm": "CNN, MiniLM-init embeddings",
    "lstm_random": "biLSTM, random 64-d embeddings",
    "lstm_minilm": "biLSTM, MiniLM-init embeddings",
    "minilm_frozen": "MiniLM-L6 frozen + linear head",
    "minilm_finetuned": "MiniLM-L6 fine-tuned (BERT-BASE analogue)",
    "minilm3_finetuned": "MiniLM 3 layers fine-tuned",
}
_KEY = "02_selective"
_LIGHT_FIELDS = ("epochs_light", "max_words", "lr_light", "batch_size_light", "vocab_size", "seed")
_MINILM_FIELDS = ("n_train_minilm", "epochs_minilm", "max_tokens", "lr_minilm", "batch_size_minilm", "seed")
_FROZEN_FIELDS = ("n_train_minilm", "max_tokens", "epochs_head", "seed")


@dataclass(frozen=True)
class SuiteData:
    """Texts and labels (1 = positive) of the training, ID test and OOD test subsets."""

    train_text: list[str]
    train_label: np.ndarray
    test_text: list[str]
    test_label: np.ndarray
    ood_text: list[str]
    ood_label: np.ndarray
    sizes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteConfig:
    """Training/inference settings shared by the suite (part of every cache key).

    Attributes
    ----------
    n_train_minilm : int
        Training examples for the three MiniLM models (the first ones of the shuffled training subset): the
        transformers cost ~100x more per example on a CPU.
    epochs_light, epochs_minilm, epochs_head : int
        Epochs for the word-level models / the fine-tuned MiniLMs / the linear head on frozen MiniLM features.
    max_words, max_tokens : int
        Truncation in words (word-level models) and WordPiece tokens (MiniLM).
    lr_light, lr_minilm : float
        Adam / AdamW learning rates (MiniLM with linear warm-up 10 % and decay).
    seed : int
    """

    n_train_minilm: int = 2000
    epochs_light: int = 4
    epochs_minilm: int = 2
    epochs_head: int = 10
    max_words: int = 256
    max_tokens: int = 128
    lr_light: float = 2e-3
    lr_minilm: float = 5e-5
    batch_size_light: int = 32
    batch_size_minilm: int = 16
    vocab_size: int = 20000
    seed: int = 0


def _subsample(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    if n is None or n >= len(frame):
        return frame.reset_index(drop=True)
    if n < 2:
        raise InputValidationError(f"subset size: expected at least 2 examples, got {n}")
    idx = np.random.default_rng(seed).permutation(len(frame))[:n]
    return frame.iloc[np.sort(idx)].reset_index(drop=True)


def load_suite_data(
    *, n_train: int | None = 4000, n_test: int | None = 2000, n_ood: int | None = 2000, seed: int = 0
) -> SuiteData:
    """IMDb train/test and RT sentence polarity, each randomly subsampled (seeded; ``None`` keeps all).

    Training order is shuffled (so the first ``n_train_minilm`` examples are a random, roughly balanced subset).
    """
    from helpers.data import load

    train = load("imdb", split="train")
    train = _subsample(train, n_train, seed).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    test = _subsample(load("imdb", split="test"), n_test, seed + 1)
    ood = _subsample(load("rt_polarity"), n_ood, seed + 2)
    return SuiteData(
        train_text=train.text.tolist(),
        train_label=train.label.to_numpy(np.int64),
        test_text=test.text.tolist(),
        test_label=test.label.to_numpy(np.int64),
        ood_text=ood.text.tolist(),
        ood_label=ood.label.to_numpy(np.int64),
        sizes=dict(train=len(train), test=len(test), ood=len(ood)),
    )


def build_vocab(texts: Sequence[str], *, max_size: int = 20000):
    """Word vocabulary of the training texts (min frequency 2)."""
    from helpers.models.text import Vocab

    return Vocab.build(texts, min_freq=2, max_size=max_size)


def _digest(texts: Sequence[str]) -> str:
    h = hashlib.sha1()
    for t in texts:
        h.update(t.encode("utf-8", "replace"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def _light_model(name: str, vocab) -> nn.Module:
    """The suite's word-level models from the text-model zoo: random 64-d or MiniLM-initialised embeddings."""
    from helpers.models.zoo import minilm_embeddings, word_model

    if name == "bow_sum":
        return word_model("bow", len(vocab))
    family, init = name.split("_")
    kind = {"embsum": "embsum", "cnn": "textcnn", "lstm": "lstm"}[family]
    if init == "random":
        return word_model(kind, len(vocab), dim=64)
    return word_model(kind, len(vocab), embeddings=minilm_embeddings(vocab))


def _timed_predict(model, data, **kwargs) -> tuple[np.ndarray, float]:
    from helpers.training import predict

    start = time.perf_counter()
    logits = predict(model, data, **kwargs)
    return logits, time.perf_counter() - start


def _n_params(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def _run_light(name, data, vocab, cfg, run_key, progress) -> dict:
    from helpers.models.text import Vocab
    from helpers.training import fit

    model = _light_model(name, vocab)
    train = vocab.dataset(data.train_text, data.train_label, max_len=cfg.max_words)
    fit(
        model, train, epochs=cfg.epochs_light, lr=cfg.lr_light, batch_size=cfg.batch_size_light,
        collate_fn=Vocab.collate, seed=cfg.seed, progress=progress,
        checkpoint_dir=cache_dir() / "checkpoints" / _KEY / run_key, checkpoint_every=200,
    )  # fmt: skip
    out = {}
    for split, texts in (("id", data.test_text), ("ood", data.ood_text)):
        ds = vocab.dataset(texts, max_len=cfg.max_words)
        out[f"{split}_logits"], out[f"{split}_seconds"] = _timed_predict(model, ds, collate_fn=Vocab.collate)
    out["n_params"] = _n_params(model)
    return out


def _features(model, texts, collate, key, split) -> tuple[np.ndarray, float]:
    def compute():
        feats, secs = _timed_predict(
            model, list(texts), collate_fn=collate, batch_size=64, forward_fn=lambda m, x: m.features(**x)
        )
        return {"features": feats, "seconds": np.array(secs)}

    got = cached_arrays("features", {**key, "split": split}, compute)
    return got["features"], float(got["seconds"])


def _run_frozen(data, cfg, run_key, progress) -> dict:
    from helpers.models.minilm import MiniLMClassifier, MiniLMCollator
    from helpers.models.zoo import train_linear_head

    enc = MiniLMClassifier(2, freeze_encoder=True)
    collate = MiniLMCollator(enc.tokenizer, max_length=cfg.max_tokens)
    base = {"model": "minilm_frozen_encoder", "max_tokens": cfg.max_tokens}
    n = min(cfg.n_train_minilm, len(data.train_text))
    f_train, _ = _features(
        enc, data.train_text[:n], collate, {**base, "texts": _digest(data.train_text[:n])}, "train"
    )
    head = train_linear_head(f_train, data.train_label[:n], epochs=cfg.epochs_head, lr=1e-2, batch_size=64,
                             seed=cfg.seed, progress=progress,
                             checkpoint_dir=cache_dir() / "checkpoints" / _KEY / run_key)  # fmt: skip
    out = {}
    for split, texts in (("id", data.test_text), ("ood", data.ood_text)):
        feats, secs = _features(enc, texts, collate, {**base, "texts": _digest(texts)}, split)
        out[f"{split}_logits"], head_secs = _timed_predict(head, feats)
        out[f"{split}_seconds"] = secs + head_secs
    out["n_params"] = _n_params(enc.encoder) + _n_params(head)
    return out


def _run_finetuned(name, data, cfg, run_key, progress) -> dict:
    from helpers.models.minilm import MiniLMClassifier, MiniLMCollator
    from helpers.training import fit

    model = MiniLMClassifier(2, num_layers=3 if name == "minilm3_finetuned" else None)
    collate = MiniLMCollator(model.tokenizer, max_length=cfg.max_tokens)
    n = min(cfg.n_train_minilm, len(data.train_text))
    train = list(zip(data.train_text[:n], data.train_label[:n].tolist()))
    fit(
        model, train, epochs=cfg.epochs_minilm, lr=cfg.lr_minilm, batch_size=cfg.batch_size_minilm,
        optimizer="adamw", weight_decay=0.01, scheduler="linear", warmup=0.1, collate_fn=collate,
        seed=cfg.seed, progress=progress, checkpoint_dir=cache_dir() / "checkpoints" / _KEY / run_key,
        checkpoint_every=50,
    )  # fmt: skip
    out = {}
    for split, texts in (("id", data.test_text), ("ood", data.ood_text)):
        out[f"{split}_logits"], out[f"{split}_seconds"] = _timed_predict(
            model, list(texts), collate_fn=collate, batch_size=64
        )
    out["n_params"] = _n_params(model)
    return out


def suite_predictions(
    data: SuiteData,
    *,
    models: Sequence[str] = SUITE,
    config: SuiteConfig | None = None,
    progress: bool = True,
) -> dict[str, dict[str, np.ndarray]]:
    """Train (or load) each model and return its cached ID/OOD logits, inference times and parameter count.

    Returns
    -------
    dict name -> dict with ``id_logits`` (n_test, 2), ``ood_logits`` (n_ood, 2), ``id_seconds`` / ``ood_seconds``
    (wall seconds of the prediction pass when it was computed: the inference-cost proxy; noisy on a shared CPU,
    cached with the logits) and ``n_params``.
    """
    cfg = config or SuiteConfig()
    unknown = [m for m in models if m not in SUITE]
    if unknown:
        raise UnknownNameError("suite model", unknown[0], SUITE)
    vocab = build_vocab(data.train_text, max_size=cfg.vocab_size)
    data_key = {k: _digest(getattr(data, f"{k}_text")) for k in ("train", "test", "ood")}
    out = {}
    for name in models:
        is_minilm = name.startswith("minilm")
        n_tr = min(cfg.n_train_minilm, len(data.train_text)) if is_minilm else len(data.train_text)
        # only the settings this model depends on enter its key
        fields = (
            _LIGHT_FIELDS if not is_minilm else _FROZEN_FIELDS if name == "minilm_frozen" else _MINILM_FIELDS
        )
        settings = sorted((k, v) for k, v in asdict(cfg).items() if k in fields)
        run_key = f"{name}-n{n_tr}-{data_key['train']}-s{cfg.seed}-{_digest([repr(settings)])}"

        def compute(name=name, run_key=run_key):
            if name == "minilm_frozen":
                res = _run_frozen(data, cfg, run_key, progress)
            elif name.endswith("finetuned"):
                res = _run_finetuned(name, data, cfg, run_key, progress)
            else:
                res = _run_light(name, data, vocab, cfg, run_key, progress)
            return {k: np.asarray(v) for k, v in res.items()}

        key = {"run": run_key, "test": data_key["test"], "ood": data_key["ood"]}
        got = cached_arrays("logits", key, compute)
        out[name] = {k: np.asarray(v) for k, v in got.items()}
    return out


def predictions_frame(preds: dict[str, dict[str, np.ndarray]], data: SuiteData) -> pd.DataFrame:
    """Tidy per-example frame: model, split (id/ood), confidence (MaxProb), correct, label."""
    rows = []
    for name, p in preds.items():
        for split, labels in (("id", data.test_label), ("ood", data.ood_label)):
            probs = softmax(np.asarray(p[f"{split}_logits"], dtype=np.float64))
            rows.append(
                pd.DataFrame(
                    dict(
                        model=name,
                        split=split,
                        confidence=probs.max(1),
                        correct=probs.argmax(1) == labels,
                        label=labels,
                    )
                )
            )
    return pd.concat(rows, ignore_index=True)
