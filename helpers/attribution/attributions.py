"""Batched, pair-aware token attributions (Integrated Gradients, KernelSHAP, LIME) as one tidy frame.

Paper 4 (§4.2) explains every prediction with three token-level methods:

* ``"ig"`` -- Integrated Gradients (Sundararajan et al. 2017) through Captum's ``LayerIntegratedGradients`` on
  the model's token-embedding layer: a_t = Σ_d (e_td − e'_td) · (1/m) Σ_k ∂f(e' + k/m (e − e'))/∂e_td, with the
  baseline e' the embedding of the mask/unknown token at every maskable position (the paper's <MASK> baseline).
  Completeness: Σ_t a_t ≈ f(x) − f(x') (the convergence delta is kept per example).  Several examples are
  attributed in one Captum call; ``internal_batch_size`` bounds the (examples × steps) forward batch.
* ``"shap"`` -- KernelSHAP (Lundberg & Lee 2017) through ``shap.KernelExplainer`` over binary token masks: a
  coalition z ∈ {0,1}^T keeps the tokens with z_t = 1 and replaces the others by the mask token (the sequence
  length and the positions stay fixed, so segments stay aligned).  The background is the all-masked sequence, so
  Σ_t φ_t = f(x) − f(all masked) (efficiency).  We use the kernel method rather than ``shap.Explainer`` with a
  text masker because the text masker works on raw strings of one tokenizer and loses the pair segmentation.
* ``"lime"`` -- LIME (Ribeiro et al. 2016) through ``lime.lime_text.LimeTextExplainer(bow=False)``.  Each token
  is rendered as a unique placeholder word, so LIME's word masking maps back to token positions exactly; the
  ``classifier_fn`` rebuilds the id sequences of all perturbed samples and runs the model in batches.

Every method explains the probability (``output="prob"``, default) or logit of the target class -- by default the
predicted class, as in the paper ("the explanation for that prediction", §3).

The result is a tidy :class:`pandas.DataFrame` with one row per (example, token):
``example, model, method, segment, position, token, special, score, target``.  ``segment`` is 0 for the first
text (premise / sentence 1) and 1 for the second; ``special`` marks separator / CLS tokens (their segment is the
one they close).  Results are cached on disk (:func:`helpers.cache.cached_arrays`) keyed by the model's
parameters, the tokenizer, the inputs, the method and its options.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from helpers.attribution._core import ig, kernel_shap, lime_text
from helpers.attribution._core.runner import Options, _pad, _Runner
from helpers.attribution.tokenizers import (
    Encoded,
    HFTokenizer,
    WordTokenizer,
    as_tokenizer,
    model_fingerprint,
)
from helpers.cache import cached_arrays
from helpers.errors import InputValidationError
from helpers.training.device import get_device

__all__ = [
    "Encoded",
    "WordTokenizer",
    "HFTokenizer",
    "as_tokenizer",
    "attribute",
    "model_fingerprint",
    "METHODS",
    "ATTRIBUTION_COLUMNS",
]

METHODS = ("ig", "shap", "lime")
ATTRIBUTION_COLUMNS = [
    "example",
    "model",
    "method",
    "segment",
    "position",
    "token",
    "special",
    "score",
    "target",
    "word",
]

#: one module per method, each with ``attribute(runner, encs, targets, options) -> (scores, deltas)``
_METHOD_MODULES = {"ig": ig, "shap": kernel_shap, "lime": lime_text}


def attribute(
    model: nn.Module,
    tokenizer: Any,
    inputs: Sequence[str] | Sequence[Sequence[str]],
    *,
    method: str = "ig",
    model_name: str = "model",
    forward: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    embedding_layer: nn.Module | None = None,
    target: str | Sequence[int] = "pred",
    output: str = "prob",
    batch_size: int = 32,
    n_steps: int = 32,
    internal_batch_size: int | None = None,
    n_samples: int = 200,
    seed: int = 0,
    mask_special: bool = True,
    device: str | torch.device = "auto",
    cache: bool = True,
    refresh: bool = False,
) -> pd.DataFrame:
    """Token attributions of ``model`` on ``inputs`` with one method, as a tidy frame (paper 4, §4.2).

    Parameters
    ----------
    model : nn.Module
        Classifier returning logits ``(N, C)``; put in eval mode here.
    tokenizer : Vocab, HF tokenizer, :class:`WordTokenizer` or :class:`HFTokenizer`
    inputs : list of str or list of (str, str)
        Single texts or text pairs (premise/hypothesis, question pairs).
    method : {"ig", "shap", "lime"}, keyword-only
    model_name : str
        Name written into the ``model`` column (the cache key uses the parameter fingerprint, not the name).
    forward : callable ``(ids, segments, attention_mask) -> logits``, optional
        How to call the model; default ``model(ids)`` for word vocabularies and
        ``model(input_ids=, attention_mask=, token_type_ids=)`` for HF tokenizers.
    embedding_layer : nn.Module, optional
        Token-embedding layer for IG (default: ``model.embedding``, ``model.embeddings`` or the HF encoder's
        ``embeddings.word_embeddings``).  Must output one vector per token, shape ``(N, T, D)``.
    target : "pred" or sequence of int
        Class explained per example: the predicted class (default) or given labels.
    output : {"prob", "logit"}
        Explain the softmax probability (default) or the logit of the target class.
    batch_size : int
        Examples per IG call; model batch for the SHAP/LIME perturbations.  ``batch_size=1`` is the
        one-at-a-time reference of the benchmark.
    n_steps : int
        IG Riemann steps (Captum's Gauss-Legendre rule).
    internal_batch_size : int, optional
        Captum's forward batch for IG (default ``batch_size * n_steps``: one forward per IG call).
    n_samples : int
        Perturbed samples per example for SHAP (KernelSHAP ``nsamples``) and LIME (``num_samples``).
    seed : int
    mask_special : bool, default True
        Treat separators / CLS as features too (masked like any token), so that they receive attributions
        (FIRST-TOK needs the separator's); ``False`` keeps them fixed (score 0).
    device : str or torch.device, default "auto"
        Where the model runs (:func:`helpers.training.get_device`: CUDA when present); it is moved there.
    cache, refresh : bool
        Read/write the disk cache (namespace ``"attributions"``); ``refresh`` recomputes.

    Returns
    -------
    pandas.DataFrame
        Columns ``example, model, method, segment, position, token, special, score, target, word`` (``word``:
        index of the token's word within its segment, -1 for special tokens); ``frame.attrs``
        holds ``delta`` (IG convergence deltas per example; NaN for SHAP/LIME) and ``probs`` (N × C), as lists.

    Raises
    ------
    InputValidationError
        Unknown method/output, empty inputs, a target list of the wrong length.
    """
    inputs, tok, encs, target = _checked(tokenizer, inputs, method=method, output=output, target=target,
                                         sizes=(batch_size, n_steps, n_samples))  # fmt: skip
    key = {
        "model": model_fingerprint(model),
        "tokenizer": tok.identity(),
        "inputs": [list(x) if not isinstance(x, str) else x for x in inputs],
        "method": method,
        "target": target,
        "output": output,
        "n_steps": n_steps if method == "ig" else None,
        "n_samples": n_samples if method != "ig" else None,
        "seed": seed,
        "mask_special": mask_special,
        "v": 2,  # 2: IG through separate q/k/v projections (float-rounding changes)
    }

    options = Options(batch_size=batch_size, n_steps=n_steps, internal_batch_size=internal_batch_size,
                      n_samples=n_samples, seed=seed, mask_special=mask_special, mask_id=tok.mask_id,
                      embedding_layer=embedding_layer)  # fmt: skip

    def compute() -> dict[str, np.ndarray]:
        return _compute(model, tok, encs, method=method, forward=forward, target=target, output=output,
                        options=options, device=device)  # fmt: skip

    arrays = (cached_arrays("attributions", key, compute, refresh=refresh, code=("helpers.attribution", "helpers.models"))
              if cache else compute())  # fmt: skip
    frame = pd.DataFrame(
        {
            "example": arrays["example"].astype(int),
            "model": model_name,
            "method": method,
            "segment": arrays["segment"].astype(int),
            "position": arrays["position"].astype(int),
            "token": arrays["token"].astype(str),
            "special": arrays["special"].astype(bool),
            "score": arrays["score"].astype(float),
            "target": arrays["target"].astype(int),
            "word": np.concatenate([e.word_index() for e in encs]).astype(int),
        }
    )
    # plain lists (not arrays) so that pd.concat can compare the attrs of several frames
    frame.attrs["delta"] = arrays["delta"].tolist()
    frame.attrs["probs"] = arrays["probs"].tolist()
    return frame


def _checked(tokenizer, inputs, *, method, output, target, sizes):
    """Validate :func:`attribute`'s arguments; return the inputs as str / tuples, the tokenizer adapter, the
    encodings and the target ("pred" or a list of int)."""
    if method not in METHODS:
        raise InputValidationError(f"method: expected one of {METHODS}, got {method!r}")
    if output not in ("prob", "logit"):
        raise InputValidationError(f"output: expected 'prob' or 'logit', got {output!r}")
    if min(sizes) < 1:
        raise InputValidationError("batch_size, n_steps and n_samples must be ≥ 1")
    inputs = [x if isinstance(x, str) else tuple(x) for x in inputs]
    if not inputs:
        raise InputValidationError("inputs: expected at least one text or text pair")
    tok = as_tokenizer(tokenizer)
    encs = [tok.encode(x) for x in inputs]
    if any(len(e.ids) == 0 for e in encs):
        raise InputValidationError("an input has no tokens")
    if not isinstance(target, str):
        target = [int(t) for t in target]
        if len(target) != len(inputs):
            raise InputValidationError(f"target: expected {len(inputs)} labels, got {len(target)}")
    elif target != "pred":
        raise InputValidationError(f"target: expected 'pred' or a list of labels, got {target!r}")
    return inputs, tok, encs, target


def _compute(model, tok, encs, *, method, forward, target, output, options: Options, device) -> dict[str, np.ndarray]:
    """Predicted probabilities, targets, and the method's token scores as flat arrays (the cached payload)."""
    model.eval()
    dev = get_device(device)
    model.to(dev)
    fwd = forward or tok.default_forward(model)
    runner = _Runner(model, fwd, tok.pad_id, output, max(options.batch_size, 1), dev)
    probs = []
    with torch.no_grad():
        for start in range(0, len(encs), 256):
            chunk = encs[start : start + 256]
            ids = _pad([e.ids for e in chunk], tok.pad_id)
            segs = _pad([e.segments for e in chunk], 0)
            mask = (
                torch.arange(ids.shape[1])[None, :] < torch.tensor([len(e.ids) for e in chunk])[:, None]
            ).long()
            logits = fwd(ids.to(dev), segs.to(dev), mask.to(dev))
            probs.append(torch.softmax(logits.float(), -1).cpu().numpy())
    probs = np.concatenate(probs)
    targets = probs.argmax(1) if isinstance(target, str) else np.asarray(target)
    torch.manual_seed(options.seed)
    scores, delta = _METHOD_MODULES[method].attribute(runner, encs, targets, options)
    lens = [len(e.ids) for e in encs]
    return {
        "example": np.repeat(np.arange(len(encs)), lens),
        "segment": np.concatenate([e.segments for e in encs]).astype(np.int64),
        "position": np.concatenate([np.arange(n) for n in lens]),
        "token": np.asarray([t for e in encs for t in e.tokens], dtype=str),
        "special": np.concatenate([e.special for e in encs]).astype(bool),
        "score": np.concatenate(scores).astype(np.float64),
        "target": np.repeat(targets, lens).astype(np.int64),
        "delta": np.asarray(delta, dtype=np.float64),
        "probs": probs.astype(np.float64),
    }
