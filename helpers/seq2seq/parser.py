"""T5-architecture seq2seq "parser" of paper 1: training from scratch, beam search, sequence confidence.

Paper 1 (Sec. 4.2, App. B.1) fine-tunes T5-base (Adam, no LR schedule, weight decay 1e-3) and decodes with beam
search, beam size 4.  Here the same architecture (``transformers.T5ForConditionalGeneration``) is built from a
:class:`ParserConfig` — a ``"tiny"`` preset for CPU runs (0.23M parameters with SCAN's vocabulary), ``"t5-small"`` / ``"t5-base"`` sized
presets for a GPU — with a word-level :class:`~helpers.seq2seq.vocab.WordVocab`, and trained with
:func:`helpers.training.fit` (resumable checkpoints).  Weight snapshots of the first checkpoints (every ``K``
steps) are kept for negative mining (:mod:`helpers.seq2seq.negatives`).

Sequence confidence (paper 1, Sec. 4.2, "Average Confidence"): "the probability of the most probable sequence in
the beam, which is calculated by the product of softmax probabilities of each word in the sequence" —
:func:`sequence_probability` computes ``Π_t p(y_t | y_<t, x)`` over the output tokens *and* the closing ``</s>``
with one teacher-forced pass, so it does not depend on how ``generate`` scores beams.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.errors import InputValidationError
from helpers.models.text import pad_sequences as _pad
from helpers.seq2seq.constraints import OutputConstraint, constraint_kwargs
from helpers.seq2seq.vocab import WordVocab
from helpers.training import FitResult, TrainSettings, fit, get_device

__all__ = [
    "ParserConfig",
    "PRESETS",
    "resolve_parser_config",
    "build_parser",
    "Seq2SeqDataset",
    "collate_seq2seq",
    "train_parser",
    "snapshot_paths",
    "load_snapshot",
    "BeamResult",
    "beam_search",
    "sequence_probability",
    "exact_match",
    "OutputConstraint",
]


@dataclass(frozen=True)
class ParserConfig:
    """Size of a T5-architecture parser (fields map onto ``transformers.T5Config``).

    ``PRESETS["t5-base"]`` has T5-base's shape (d_model 768, 12+12 layers, 12 heads; paper 1's parser, but here
    trained from scratch, not from the pretrained weights, which cannot be downloaded here).
    """

    d_model: int = 64
    d_ff: int = 256
    num_layers: int = 2
    num_decoder_layers: int | None = None
    num_heads: int = 4
    d_kv: int = 16
    dropout_rate: float = 0.1
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for cache keys)."""
        return dataclasses.asdict(self)


PRESETS: dict[str, ParserConfig] = {
    "tiny": ParserConfig(),
    "small": ParserConfig(d_model=128, d_ff=512, num_layers=3, num_heads=4, d_kv=32),
    "t5-small": ParserConfig(d_model=512, d_ff=2048, num_layers=6, num_heads=8, d_kv=64),
    "t5-base": ParserConfig(d_model=768, d_ff=3072, num_layers=12, num_heads=12, d_kv=64),
}


def resolve_parser_config(config: ParserConfig | str | dict) -> ParserConfig:
    """A :class:`ParserConfig` from itself, a preset name of :data:`PRESETS` or a dict of its fields (unknown fields
    and names raise :class:`~helpers.errors.InputValidationError`)."""
    if isinstance(config, ParserConfig):
        return config
    if isinstance(config, str):
        if config not in PRESETS:
            raise InputValidationError(f"config: expected one of {sorted(PRESETS)}, got {config!r}")
        return PRESETS[config]
    if isinstance(config, dict):
        fields = {f.name for f in dataclasses.fields(ParserConfig)}
        unknown = set(config) - fields
        if unknown:
            raise InputValidationError(
                f"config: unknown fields {sorted(unknown)}; expected some of {sorted(fields)}"
            )
        return ParserConfig(**config)
    raise InputValidationError(
        f"config: expected a ParserConfig, preset name or dict, got {type(config).__name__}"
    )


def build_parser(vocab_size: int, config: ParserConfig | str | dict = "tiny", *, seed: int = 0) -> nn.Module:
    """A freshly initialised ``T5ForConditionalGeneration`` with a shared word-level vocabulary.

    Parameters
    ----------
    vocab_size : int
        ``len(vocab)`` (ids: pad 0 = decoder start, eos 1, unk 2).
    config : ParserConfig, preset name (``"tiny"``, ``"small"``, ``"t5-small"``, ``"t5-base"``) or dict
    seed : int, keyword-only
        Seeds the initialisation.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    if int(vocab_size) < 4:
        raise InputValidationError(f"vocab_size: expected >= 4 (3 specials + 1 token), got {vocab_size}")
    cfg = resolve_parser_config(config)
    t5 = T5Config(
        vocab_size=int(vocab_size),
        d_model=cfg.d_model,
        d_ff=cfg.d_ff,
        d_kv=cfg.d_kv,
        num_layers=cfg.num_layers,
        num_decoder_layers=cfg.num_decoder_layers,
        num_heads=cfg.num_heads,
        dropout_rate=cfg.dropout_rate,
        relative_attention_num_buckets=cfg.relative_attention_num_buckets,
        relative_attention_max_distance=cfg.relative_attention_max_distance,
        pad_token_id=WordVocab.pad_id,
        eos_token_id=WordVocab.eos_id,
        decoder_start_token_id=WordVocab.pad_id,
        feed_forward_proj="relu",
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = T5ForConditionalGeneration(t5)
    model.generation_config.decoder_start_token_id = WordVocab.pad_id
    model.generation_config.pad_token_id = WordVocab.pad_id
    model.generation_config.eos_token_id = WordVocab.eos_id
    return model


class Seq2SeqDataset(torch.utils.data.Dataset):
    """Items ``(source ids, target ids)`` (each ending in ``</s>``) of ``(input, output)`` string pairs.

    ``unk_singletons = p`` replaces each occurrence of a source word seen only once in ``pairs`` by ``<unk>`` with
    probability ``p`` (drawn once, from ``seed``): the parser then learns an ``<unk>`` embedding for unseen test
    words while still seeing most rare words, instead of losing every rare word to a frequency cut-off.  With a
    vocabulary of unknown-word classes (``WordVocab.build(..., unk_signatures=True)``) the word becomes its class
    token instead, as an unseen test word will.
    """

    def __init__(
        self,
        pairs: Sequence[Sequence[str]],
        vocab: WordVocab,
        *,
        max_source_len: int | None = None,
        max_target_len: int | None = None,
        unk_singletons: float = 0.0,
        seed: int = 0,
    ):
        if len(pairs) == 0:
            raise InputValidationError("pairs: expected at least one (input, output) pair, got none")
        if not 0.0 <= unk_singletons <= 1.0:
            raise InputValidationError(f"unk_singletons: expected a probability in [0, 1], got {unk_singletons}")
        once: set[str] = set()
        if unk_singletons:
            from collections import Counter

            counts = Counter(w for p in pairs for w in p[0].split())
            once = {w for w, c in counts.items() if c == 1}
        rng = np.random.default_rng([seed, 7])
        self.items = []
        for p in pairs:
            words = p[0].split()
            if once:
                hit = rng.random(len(words)) < unk_singletons
                words = [vocab.unk_token(w) if h and w in once else w for w, h in zip(words, hit)]
            src, tgt = vocab.encode(" ".join(words)), vocab.encode(p[1])
            if max_source_len:
                src = src[: max_source_len - 1] + [vocab.eos_id] if len(src) > max_source_len else src
            if max_target_len:
                tgt = tgt[: max_target_len - 1] + [vocab.eos_id] if len(tgt) > max_target_len else tgt
            self.items.append((src, tgt))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[list[int], list[int]]:
        return self.items[i]


def collate_seq2seq(items: Sequence[tuple[Sequence[int], Sequence[int]]]) -> dict[str, torch.Tensor]:
    """Pad a list of ``(src, tgt)`` id lists: ``input_ids``, ``attention_mask``, ``labels`` (padding = -100)."""
    src = _pad([s for s, _ in items], WordVocab.pad_id)
    return {
        "input_ids": src,
        "attention_mask": (src != WordVocab.pad_id).long(),
        "labels": _pad([t for _, t in items], -100),
    }


def _t5_loss(model: nn.Module, batch: dict, _progress: float) -> torch.Tensor:
    return model(**batch).loss


def snapshot_paths(checkpoint_dir: str | os.PathLike) -> dict[int, Path]:
    """``{step: path}`` of the weight snapshots written by :func:`train_parser` (sorted by step)."""
    d = Path(checkpoint_dir) / "snapshots"
    found = {int(p.stem.removeprefix("step")): p for p in d.glob("step*.pt")} if d.exists() else {}
    return dict(sorted(found.items()))


def load_snapshot(model: nn.Module, path: str | os.PathLike) -> nn.Module:
    """Load a snapshot's weights into ``model`` (``weights_only=True``) and return it in eval mode."""
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()


PARSER_SETTINGS = TrainSettings(weight_decay=1e-3, warmup=0.05)  #: :func:`train_parser`'s defaults (set max_steps)


def train_parser(
    model: nn.Module,
    pairs: Sequence[Sequence[str]],
    vocab: WordVocab,
    settings: TrainSettings | None = None,
    *,
    snapshot_every: int | None = None,
    n_snapshots: int = 5,
    unk_singletons: float = 0.0,
    **overrides: Any,
) -> FitResult:
    """Train the parser with teacher forcing (cross-entropy on the target ids), resumably.

    ``settings`` (default :data:`PARSER_SETTINGS`; ``**overrides`` change it) must set ``max_steps``.  Paper 1
    App. B.1: Adam, constant learning rate, weight decay 1e-3 (no ``scheduler``; the paper *fine-tunes* a
    pretrained T5-base).  A ``scheduler`` (``"linear"`` or ``"cosine"``, with ``warmup`` as a fraction of
    ``max_steps``) is for parsers trained from scratch, where a decaying rate lets the last steps settle.  With
    ``settings.checkpoint_dir`` the run resumes from its newest checkpoint (so a finished parser is never
    retrained); checkpoints are written every ``snapshot_every`` steps (default a quarter of the run), and with ``snapshot_every = K`` the
    weights after steps ``K, 2K, ..., n_snapshots·K`` are saved under ``checkpoint_dir/snapshots/`` — "the first 5
    checkpoints of the parser" whose beams give the discriminator's negatives (App. B.1).  ``unk_singletons``: the
    share of once-seen source words read as ``<unk>`` (see :class:`Seq2SeqDataset`).

    Returns
    -------
    FitResult
        From :func:`helpers.training.fit`; ``resumed_from`` tells whether training was resumed.
    """
    s = TrainSettings.resolve(settings if settings is not None else PARSER_SETTINGS, **overrides)
    max_steps, checkpoint_dir = s.max_steps, s.checkpoint_dir
    if max_steps is None:
        raise InputValidationError("max_steps: expected a positive number of steps, got None")
    if snapshot_every is not None and checkpoint_dir is None:
        raise InputValidationError("snapshot_every: needs checkpoint_dir (snapshots are written there)")
    snap_steps = set()
    if snapshot_every:
        snap_steps = {snapshot_every * (j + 1) for j in range(n_snapshots)}
    snap_dir = Path(checkpoint_dir) / "snapshots" if checkpoint_dir is not None else None

    def callback(info) -> None:
        if info.step in snap_steps:
            snap_dir.mkdir(parents=True, exist_ok=True)
            final = snap_dir / f"step{info.step:09d}.pt"
            tmp = snap_dir / f".{final.name}.tmp{os.getpid()}"
            torch.save({k: v.detach().cpu() for k, v in info.model.state_dict().items()}, tmp)
            os.replace(tmp, final)

    data = Seq2SeqDataset(pairs, vocab, unk_singletons=unk_singletons, seed=s.seed)
    result = fit(
        model,
        data,
        s.replace(epochs=None, checkpoint_every=snapshot_every or max(1, max_steps // 4),
                  warmup=s.warmup if s.scheduler else 0),  # fmt: skip
        compute_loss=_t5_loss,
        collate_fn=collate_seq2seq,
        callback=callback if snap_steps else None,
    )
    missing = sorted(s for s in snap_steps if s <= max_steps and s not in snapshot_paths(checkpoint_dir))
    if missing:  # interrupted between a checkpoint and its snapshot: recover from the checkpoint when kept
        from helpers.training import load_checkpoint

        for s in missing:
            ck = Path(checkpoint_dir) / f"ckpt_step{s:09d}.pt"
            if not ck.exists():
                raise InputValidationError(
                    f"checkpoint_dir: snapshot of step {s} is missing and no checkpoint of that step is left in "
                    f"{checkpoint_dir}; delete the folder to retrain"
                )
            snap_dir.mkdir(parents=True, exist_ok=True)
            torch.save(load_checkpoint(ck)["model"], snap_dir / f"step{s:09d}.pt")
    return result


@dataclass
class BeamResult:
    """Beam-search outputs for ``n`` inputs.

    Attributes
    ----------
    beams : list of list of str
        ``beams[i]`` = the ``num_beams`` decoded outputs of input ``i``, best first.
    confidence : numpy.ndarray, shape (n,)
        Product of token probabilities of the top beam (incl. ``</s>``), see :func:`sequence_probability`.
    """

    beams: list[list[str]]
    confidence: np.ndarray

    @property
    def top(self) -> list[str]:
        """The top beam of every input."""
        return [b[0] for b in self.beams]


def _batches(inputs: Sequence[str], vocab: WordVocab, batch_size: int):
    """Indices sorted by source length (less padding), cut into batches."""
    lens = np.array([len(s.split()) for s in inputs])
    order = np.argsort(lens, kind="stable")
    for b in range(0, len(order), batch_size):
        yield order[b : b + batch_size]


@torch.no_grad()
def sequence_probability(
    model: nn.Module,
    vocab: WordVocab,
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    batch_size: int = 128,
    device: str = "auto",
    log: bool = False,
) -> np.ndarray:
    """``Π_t p(y_t | y_<t, x)`` of each output (its tokens and the closing ``</s>``) under the parser (paper 1, Sec. 4.2).

    Parameters
    ----------
    inputs, outputs : sequences of str, same length
    log : bool, keyword-only
        Return the summed log-probabilities instead of the product.
    """
    if len(inputs) != len(outputs):
        raise InputValidationError(
            f"inputs/outputs: expected equal lengths, got {len(inputs)} and {len(outputs)}"
        )
    dev = get_device(device)
    model.to(dev).eval()
    out = np.zeros(len(inputs), dtype=np.float64)
    for idx in _batches(inputs, vocab, batch_size):
        batch = collate_seq2seq([(vocab.encode(inputs[i]), vocab.encode(outputs[i])) for i in idx])
        batch = {k: v.to(dev) for k, v in batch.items()}
        logits = model(**batch).logits.float()
        logp = torch.log_softmax(logits, dim=-1)
        labels = batch["labels"]
        mask = labels != -100
        tok = logp.gather(-1, labels.clamp_min(0).unsqueeze(-1)).squeeze(-1)
        out[idx] = (tok * mask).sum(-1).double().cpu().numpy()
    return out if log else np.exp(out)


@torch.no_grad()
def beam_search(
    model: nn.Module,
    vocab: WordVocab,
    inputs: Sequence[str],
    *,
    num_beams: int = 4,
    max_new_tokens: int = 64,
    batch_size: int = 128,
    device: str = "auto",
    progress: bool = False,
    output_lengths: Sequence[int] | None = None,
    allowed_tokens: Sequence[str] | None = None,
    position_tokens: Sequence[Sequence[Sequence[str] | None]] | None = None,
) -> BeamResult:
    """Beam search (paper 1, App. B.1: beam size 4) returning all beams and the top beam's confidence.

    Beams are ranked by total log-probability (``length_penalty=0``), so the first beam is "the most probable
    sequence in the beam" (Sec. 4.2).  The search is the canonical one (``early_stopping="never"``): it runs until
    no unfinished beam can still beat the finished ones.  With ``early_stopping=True`` it would stop as soon as
    ``num_beams`` hypotheses had ended, and with ``length_penalty=0`` those are often beams that closed early with
    a cheap ``</s>``.  On notebook 01's SCAN parser that cut dev exact match from .63 to .30, and 49 % of the dev
    outputs became strict prefixes of the gold.  A tagger with ``output_lengths`` is not affected: every beam
    ends at the same step.

    Parameters
    ----------
    output_lengths : sequence of int, keyword-only, optional
        Exact number of output tokens per input (a tagger emits one tag per input word); every beam ends with
        ``</s>`` after exactly that many tokens (see :class:`OutputConstraint`).  Must fit ``max_new_tokens - 1``.
    allowed_tokens : sequence of str, keyword-only, optional
        The only output tokens a beam may contain (e.g. the tag set), besides ``</s>``.
    position_tokens : per input, per output position: the admissible tokens, or None, keyword-only, optional
        A tag dictionary's limits (:func:`helpers.seq2seq.tagging.position_tags`): position ``t`` of input ``i``'s
        output must be one of ``position_tokens[i][t]`` (``None``: no extra limit); needs ``output_lengths``.
    """
    from helpers.progress import tqdm

    if num_beams < 1:
        raise InputValidationError(f"num_beams: expected >= 1, got {num_beams}")
    if len(inputs) == 0:
        return BeamResult(beams=[], confidence=np.zeros(0))
    if output_lengths is not None:
        output_lengths = np.asarray(output_lengths, dtype=np.int64)
        if output_lengths.shape != (len(inputs),) or (output_lengths < 0).any():
            raise InputValidationError(
                f"output_lengths: expected {len(inputs)} non-negative lengths, got shape {output_lengths.shape}"
            )
        if len(output_lengths) and output_lengths.max() + 1 > max_new_tokens:
            raise InputValidationError(
                f"output_lengths: the longest ({output_lengths.max()}) + </s> exceeds max_new_tokens ({max_new_tokens})"
            )
    allowed_ids = None
    if allowed_tokens is not None:
        unknown = [t for t in allowed_tokens if t not in vocab]
        if unknown:
            raise InputValidationError(f"allowed_tokens: not in the parser's vocabulary: {unknown[:5]}")
        allowed_ids = [vocab.stoi[t] for t in allowed_tokens]
    position_ids = None
    if position_tokens is not None:
        if output_lengths is None or len(position_tokens) != len(inputs):
            raise InputValidationError(
                f"position_tokens: expected one list per input ({len(inputs)}) together with output_lengths"
            )
        unknown = sorted({t for ex in position_tokens for pos in ex if pos for t in pos if t not in vocab})
        if unknown:
            raise InputValidationError(f"position_tokens: not in the parser's vocabulary: {unknown[:5]}")
        position_ids = [[None if pos is None else [vocab.stoi[t] for t in pos] for pos in ex] for ex in position_tokens]
    dev = get_device(device)
    model.to(dev).eval()
    beams: list[list[str] | None] = [None] * len(inputs)
    for idx in tqdm(
        list(_batches(inputs, vocab, batch_size)), disable=not progress, desc="beam", leave=False
    ):
        src = _pad([vocab.encode(inputs[i]) for i in idx], vocab.pad_id).to(dev)
        gen = model.generate(
            input_ids=src,
            attention_mask=(src != vocab.pad_id).long(),
            num_beams=num_beams,
            num_return_sequences=num_beams,
            length_penalty=0.0,
            early_stopping="never",  # canonical beam search (see the docstring)
            do_sample=False,
            max_new_tokens=int(max_new_tokens),
            **constraint_kwargs(output_lengths, allowed_ids, idx, num_beams, vocab, len(vocab), position_ids),
        )
        gen = gen.view(len(idx), num_beams, -1).cpu().numpy()
        for j, i in enumerate(idx):
            beams[i] = [vocab.decode(seq) for seq in gen[j]]
    top = [b[0] for b in beams]  # type: ignore[index]
    conf = sequence_probability(model, vocab, inputs, top, batch_size=batch_size, device=device)
    return BeamResult(beams=beams, confidence=conf)  # type: ignore[arg-type]


def exact_match(predictions: Sequence[str], golds: Sequence[str]) -> np.ndarray:
    """Exact-match correctness (paper 1, Sec. 4.3): token sequences equal after whitespace normalisation."""
    if isinstance(predictions, str) or isinstance(golds, str):
        raise InputValidationError("predictions/golds: expected sequences of strings, got a single string")
    if len(predictions) != len(golds):
        raise InputValidationError(
            f"predictions/golds: expected equal lengths, got {len(predictions)} and {len(golds)}"
        )
    return np.array([p.split() == g.split() for p, g in zip(predictions, golds)], dtype=bool)
