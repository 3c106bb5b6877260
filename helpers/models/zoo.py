"""The text-model zoo: every text classifier the notebooks use, built and trained in one place.

Models (classes in :mod:`helpers.models.text`, :mod:`helpers.models.minilm`, :mod:`helpers.models.tiny_transformer`):

* word-vocabulary models -- bag of words, sum/mean of word embeddings, Kim CNN, biLSTM (last-state or max/mean
  read-out) -- with random or MiniLM-initialised embeddings (:func:`word_model`, :func:`minilm_embeddings`);
* MiniLM-L6, fine-tuned end to end or truncated to its first layers (:class:`~helpers.models.minilm.MiniLMClassifier`);
* the frozen pretrained MiniLM-L6 encoder with a linear head on its mean-pooled embeddings, fitted either as an
  L2-regularised logistic regression (:func:`fit_logistic_head`, notebooks 02/05/06) or by gradient descent on
  cached embeddings (:func:`train_linear_head`);
* a tiny from-scratch Transformer for texts and text pairs (:class:`~helpers.models.tiny_transformer.TinyTransformer`,
  notebook 04).

Training: :func:`train_text_classifier` trains one of :data:`TEXT_MODELS` by name and returns a function
texts → ``{"logits"[, "features"]}`` in input order (:func:`word_model_outputs`, :func:`minilm_outputs`), used by
notebooks 05 and 06 and by bring-your-own-data text tasks.  Notebooks 02 and 04 build their suites from the same
constructors and train them with their papers' settings (:func:`helpers.training.fit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from helpers.errors import InputValidationError
from helpers.training.device import get_device
from helpers.training.predict import features_and_logits, in_length_order
from helpers.training.settings import TrainSettings

__all__ = [
    "TEXT_MODELS",
    "WORD_MODELS",
    "word_model",
    "minilm_embeddings",
    "train_text_classifier",
    "word_model_outputs",
    "minilm_outputs",
    "fit_logistic_head",
    "train_linear_head",
]

#: word-vocabulary architectures of :func:`word_model`
WORD_MODELS = ("bow", "embsum", "textcnn", "lstm")


def word_model(kind: str, vocab_size: int, *, num_classes: int = 2, embeddings=None, **kwargs):
    """A fresh word-vocabulary classifier: ``kind`` in :data:`WORD_MODELS`, with random embeddings (``dim``,
    default 64) or initialised from ``embeddings`` (a ``(vocab_size, d)`` tensor, e.g. :func:`minilm_embeddings`;
    the padding row is zeroed).  ``kwargs`` go to the class (e.g. ``pooling="mean"``, ``filters=32``); the initial
    weights come from torch's global generator (seed it, or use :func:`helpers.models.build_model` with ``seed=``).
    """
    from helpers.models.text import BagOfWords, EmbeddingSum, LSTMClassifier, TextCNN

    if kind not in WORD_MODELS:
        raise InputValidationError(f"kind: expected one of {WORD_MODELS}, got {kind!r}")
    if kind == "bow":
        if embeddings is not None:
            raise InputValidationError("embeddings: a bag of words has no embedding layer")
        return BagOfWords(vocab_size, num_classes)
    if kind == "embsum":
        return EmbeddingSum(vocab_size, num_classes, pretrained=embeddings, **kwargs)
    cls = TextCNN if kind == "textcnn" else LSTMClassifier
    if embeddings is None:
        return cls(vocab_size, num_classes, **kwargs)
    model = cls(vocab_size, num_classes, dim=embeddings.shape[1], **kwargs)
    with torch.no_grad():
        model.embedding.weight.copy_(embeddings)
        model.embedding.weight[0].zero_()
    return model


def minilm_embeddings(vocab) -> torch.Tensor:
    """MiniLM-L6 word embeddings of ``vocab`` (:func:`helpers.models.text.minilm_word_embeddings`), cached on disk
    by the vocabulary's words (namespace ``minilm_word_embeddings``)."""
    import hashlib

    from helpers.cache import cached_arrays
    from helpers.models.text import minilm_word_embeddings

    h = hashlib.sha1()
    for t in vocab.itos:
        h.update(t.encode("utf-8", "replace"))
        h.update(b"\0")
    key = {"vocab": h.hexdigest()[:16]}
    arr = cached_arrays("minilm_word_embeddings", key, lambda: {"e": minilm_word_embeddings(vocab).numpy()},
                        code=("helpers.models.text", "helpers.models.minilm"))["e"]  # fmt: skip
    return torch.from_numpy(np.asarray(arr, dtype=np.float32))


def train_linear_head(features, labels, settings=None, *, num_classes: int = 2, **overrides):
    """A ``torch.nn.Linear`` head trained by Adam on fixed features (e.g. cached frozen-MiniLM embeddings), with
    :func:`helpers.training.fit` under ``settings`` (a :class:`~helpers.training.TrainSettings`; ``**overrides``
    change it): the same as training the head behind a frozen encoder, with the encoder run once.  Its initial
    weights come from torch's global generator.  Returns the trained head."""
    from torch import nn

    from helpers.training import fit

    s = TrainSettings.resolve(settings, **{"progress": False, **overrides} if settings is None else overrides)
    f = np.asarray(features)
    if f.ndim != 2 or len(f) != len(labels):
        raise InputValidationError(f"features, labels: expected shapes (n, d) and (n,), got {f.shape}, {len(labels)}")
    head = nn.Linear(f.shape[1], num_classes)
    fit(head, (f, np.asarray(labels)), s)
    return head

TEXT_MODELS = ("bow", "embsum", "textcnn", "lstm", "minilm", "minilm-frozen")


def fit_logistic_head(linear, features, labels, *, C: float = 1.0) -> object:
    """Fit ``linear`` (a ``torch.nn.Linear(d, K)``) as an L2-regularised logistic regression on fixed features.

    scikit-learn's ``LogisticRegression(C=C)`` is fitted on the standardised ``features``; the standardisation is
    folded into the weights, and the logits are centred over the classes (for K = 2 they are ``±s/2`` with ``s``
    the log-odds): softmax probabilities are exactly the regression's, and the free energy −logsumexp(z) — hence
    MDE and Avg Energy — does not depend on an arbitrary per-class offset (the L2 penalty of a multinomial
    regression also drives the logits' class-sum to zero).  Returns ``linear``, updated in place.
    """
    import torch
    from sklearn.linear_model import LogisticRegression

    f = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels).astype(int)
    k = int(linear.out_features)
    if f.ndim != 2 or f.shape[1] != linear.in_features or y.shape != (f.shape[0],):
        raise InputValidationError(
            f"features, labels: expected shapes (n, {linear.in_features}) and (n,), got {f.shape} and {y.shape}"
        )
    if y.min() < 0 or y.max() >= k or len(np.unique(y)) < 2:
        raise InputValidationError(f"labels: expected at least two classes in 0..{k - 1}, got {np.unique(y)}")
    mu, sd = f.mean(0), f.std(0) + 1e-8
    reg = LogisticRegression(C=C, max_iter=2000).fit((f - mu) / sd, y)
    w = np.zeros((k, f.shape[1]))
    b = np.zeros(k)
    if reg.coef_.shape[0] == 1:  # binary: log-odds of class classes_[1] against classes_[0]
        w[reg.classes_[1]], b[reg.classes_[1]] = reg.coef_[0], reg.intercept_[0]
    else:
        w[reg.classes_], b[reg.classes_] = reg.coef_, reg.intercept_
    w, b = w / sd, b - (w / sd) @ mu
    w, b = w - w.mean(0), b - b.mean()
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(w, dtype=linear.weight.dtype))
        linear.bias.copy_(torch.as_tensor(b, dtype=linear.bias.dtype))
    return linear


def minilm_outputs(
    model, collate, *, batch_size: int = 64
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """texts → {"features", "logits"} of a MiniLM classifier, in input order.

    Two exact speed-ups for long reviews on a CPU: each text is cut to its first ``2 * collate.max_length``
    whitespace words before tokenising (every word gives at least one WordPiece, so the kept tokens are the same),
    and texts are batched in order of length (less padding; padding is masked, so outputs do not change).
    """
    cap = 2 * int(collate.max_length)

    def outputs(xs: Sequence[str]) -> dict[str, np.ndarray]:
        xs = [" ".join(str(t).split()[:cap]) for t in xs]
        return in_length_order(
            lambda batch: features_and_logits(model, batch, batch_size=batch_size, preprocess=collate.encode), xs
        )

    return outputs


def _train_minilm(name, texts, labels, s, *, num_classes, max_len, cache_key, cache_namespace):
    from helpers.cache import cached_arrays
    from helpers.models import build_model
    from helpers.models.minilm import MiniLMCollator
    from helpers.training import fit

    frozen = name == "minilm-frozen"
    model = build_model("minilm", seed=s.seed, num_labels=num_classes, freeze_encoder=frozen)
    model.to(get_device(s.device))  # the frozen encoder's features too are computed there
    collate = MiniLMCollator(model.tokenizer, max_length=max_len)
    outputs = minilm_outputs(model, collate)
    if frozen:  # pretrained encoder as a fixed feature extractor, logistic-regression head on its embeddings
        parts = {
            "minilm_train_features": texts,
            "max_length": max_len,
            "pooling": model.pooling,
            **(cache_key or {}),
        }
        feats = cached_arrays(cache_namespace, parts, lambda: {"features": outputs(texts)["features"]},
                              code=("helpers.models",))["features"]  # fmt: skip
        fit_logistic_head(model.classifier, feats, labels)
    else:
        fit(model, list(zip(texts, labels)), s.replace(batch_size=min(s.batch_size, 32)), collate_fn=collate)
    model.eval()
    return model, outputs


def text_train_settings(name: str, **changes: Any) -> TrainSettings:
    """The default :class:`~helpers.training.TrainSettings` of :func:`train_text_classifier`'s model ``name``:
    3 epochs of Adam, learning rate 5e-5 in batches of 32 for MiniLM, 3e-3 in batches of 64 for the word-level
    models, no progress bar; ``changes`` applied."""
    big = name.startswith("minilm")
    base = TrainSettings(epochs=3, lr=5e-5 if big else 3e-3, batch_size=32 if big else 64, progress=False)
    return base.replace(**changes)


def train_text_classifier(
    name: str,
    texts: Sequence[str],
    labels: Sequence[int],
    settings: TrainSettings | None = None,
    *,
    vocab=None,
    max_len: int = 256,
    cache_key: Mapping | None = None,
    cache_namespace: str = "text_models",
    num_classes: int = 2,
    **overrides: Any,
) -> tuple[object, Callable[[Sequence[str]], dict[str, np.ndarray]]]:
    """Train one sentiment classifier and return it with a function texts → {"logits"[, "features"]}.

    Parameters
    ----------
    name : str
        One of :data:`TEXT_MODELS`: a word-level model of :func:`helpers.models.build_model` (``"bow"``,
        ``"embsum"`` = mean of word embeddings, ``"textcnn"``, ``"lstm"``) over ``vocab``; ``"minilm"``
        (MiniLM-L6 fine-tuned end to end, its own WordPiece tokenizer; GPU-sized); or ``"minilm-frozen"`` (the
        pretrained MiniLM-L6 encoder kept fixed, mean-pooled sentence embeddings, a logistic-regression head fitted
        by :func:`fit_logistic_head`; one forward pass per text, CPU-sized).
    texts, labels
        Training texts and integer labels.
    vocab : helpers.models.text.Vocab
        Word vocabulary (required for the word-level models).
    settings : TrainSettings, optional
        How :func:`helpers.training.fit` trains (default :func:`text_train_settings`; ``**overrides`` change it;
        MiniLM's batches are capped at 32); its seed also seeds the initial weights; only the seed is used by
        ``"minilm-frozen"``.  Set ``checkpoint_dir`` so that re-running resumes instead of retraining.
    max_len : int
        Words (WordPiece tokens for MiniLM) kept per text.
    num_classes : int, default 2
        Output classes (labels are ``0..num_classes-1``).
    cache_namespace : str, default "text_models"
        Disk-cache namespace of ``"minilm-frozen"``'s training embeddings (notebook 05 keeps its own, ``"05_mde"``).
    cache_key : mapping, optional
        Extra key parts for the disk cache of ``"minilm-frozen"``'s training embeddings (the texts, ``max_len``
        and pooling are always part of the key).
    """
    from helpers.models import build_model
    from helpers.models.text import Vocab
    from helpers.training import fit

    s = TrainSettings.resolve(settings if settings is not None else text_train_settings(name), **overrides)
    texts, labels = list(texts), [int(v) for v in labels]
    if name not in TEXT_MODELS:
        raise InputValidationError(f"name: expected one of {TEXT_MODELS}, got {name!r}")
    if len(texts) != len(labels) or not texts:
        raise InputValidationError(
            f"texts, labels: expected equal non-zero lengths, got {len(texts)} and {len(labels)}"
        )
    if name.startswith("minilm"):
        return _train_minilm(name, texts, labels, s, num_classes=num_classes, max_len=max_len, cache_key=cache_key,
                             cache_namespace=cache_namespace)  # fmt: skip
    if vocab is None:
        raise InputValidationError(f"vocab: required for the word-level model {name!r}")
    kwargs = {"pooling": "mean"} if name == "embsum" else {}
    model = build_model(name, seed=s.seed, vocab_size=len(vocab), num_classes=num_classes, **kwargs)
    fit(model, vocab.dataset(texts, labels, max_len=max_len), s, collate_fn=Vocab.collate)
    return model, word_model_outputs(model.eval(), vocab, max_len=max_len)


def word_model_outputs(
    model, vocab, *, max_len: int
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """texts → ``{"logits"[, "features"]}`` of a trained word-vocabulary text model (eval mode, batched).

    Texts are encoded with ``vocab`` (first ``max_len`` words); models with ``.features()`` also return their
    penultimate features (:func:`features_and_logits`), the others only logits.
    """
    from helpers.models.text import Vocab
    from helpers.training import predict

    def outputs(xs: Sequence[str]) -> dict[str, np.ndarray]:
        ids = vocab.encode_batch(list(xs), max_len=max_len)
        if hasattr(model, "features"):
            return features_and_logits(model, ids, preprocess=Vocab.pad)
        return {"logits": predict(model, ids, collate_fn=Vocab.pad)}

    return outputs


