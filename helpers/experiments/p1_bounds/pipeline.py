"""End-to-end, cached pipeline of paper 1 for one task: parser -> negatives -> discriminator ensemble -> votes.

Every expensive stage is cached, so re-running (or resuming an interrupted run) never repeats finished work:

* parser training: :func:`helpers.training.fit` checkpoints under ``cache_dir()/checkpoints/p1_parser_<task>_<key>``
  (a finished parser is only re-loaded; an interrupted one resumes from its newest checkpoint);
* beam outputs of the early snapshots (negative mining) and of the final parser on every set: namespace
  ``seq2seq_beams``; mined discriminator data: ``p1_negatives``;
* discriminators: one checkpoint folder per member under ``checkpoints/p1_disc_<task>_<key>``; votes: ``p1_votes``.

Keys hash the data, the vocabulary and every parameter that changes the result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from helpers.cache import cache_key, cached_arrays, code_version
from helpers.errors import InputValidationError
from helpers.experiments.p1_bounds.tasks import Seq2SeqTask, discriminator_text
from helpers.metrics import roc_auc
from helpers.paths import cache_dir
from helpers.seq2seq.discriminators import (
    DISCRIMINATOR_SETTINGS,
    SEP,
    TRAINING_RECIPE,
    discriminator_votes,
    train_discriminators,
)
from helpers.seq2seq.negatives import DiscriminatorData, discriminator_dataset, mine_negatives, snapshot_beams
from helpers.seq2seq.parser import (
    PARSER_SETTINGS,
    beam_search,
    build_parser,
    exact_match,
    load_snapshot,
    resolve_parser_config,
    snapshot_paths,
    train_parser,
)
from helpers.seq2seq.vocab import WordVocab

__all__ = ["PipelineConfig", "SetResult", "TaskResult", "decode_constraints_for", "parser_cache", "run_task"]

#: the code behind each cached stage; its :func:`~helpers.cache.code_version` joins that stage's cache key (and so
#: every later stage's), so an edit of the code retrains or re-decodes instead of reading old entries back
PARSER_CODE = ("helpers.seq2seq.parser", "helpers.seq2seq.constraints", "helpers.seq2seq.vocab", "helpers.training")
NEGATIVES_CODE = ("helpers.seq2seq.negatives", "helpers.seq2seq.tagging")
DISCRIMINATOR_CODE = ("helpers.seq2seq.discriminators", "helpers.seq2seq.trunk", "helpers.models", "helpers.training")


#: PipelineConfig fields added after caches existed; at their default (0 / False / None) they stay out of the key
_ADDED_LATER = (
    "parser_unk_singletons",
    "parser_unk_signatures",
    "parser_schedule",
    "decode_tag_dictionary",
    "negative_snapshots",
)


@dataclass(frozen=True)
class PipelineConfig:
    """Every knob of :func:`run_task` (defaults: the CPU ``default`` profile's scale).

    Parser: ``parser_config`` (preset name or dict, see :class:`helpers.seq2seq.parser.ParserConfig`),
    ``vocab_min_freq`` (rarer training words become ``<unk>``, so the parser learns an ``<unk>`` embedding, and the
    output layer over a large POS vocabulary shrinks),
    ``parser_steps``, ``parser_batch_size``, ``parser_lr``, ``parser_schedule`` (``None``: constant rate as paper 1
    App. B.1; ``"linear"``: linear decay after a 5 % warm-up), ``parser_unk_singletons`` (share of once-seen training
    words read as ``<unk>``), ``parser_unk_signatures`` (unknown words as shape/suffix classes, not one ``<unk>``);
    negatives: ``snapshot_every`` (K) and ``n_snapshots`` (5 in the paper), ``n_mine`` training inputs decoded by each snapshot (``None`` = the whole training set, as in
    the paper), ``negative_snapshots`` (mine only the last this-many of the snapshots; ``None``: all of them, as
    the paper's "first 5 checkpoints" -- see :func:`_negative_sets`), ``negatives_per_example``,
    ``max_negative_ratio``; discriminators: ``disc_kind`` ("minilm" or
    "scratch"), ``n_members`` (5), ``disc_epochs``, ``disc_batch_size``, ``disc_lr``, ``disc_max_length``,
    ``disc_freeze_layers`` (MiniLM: frozen embeddings + lowest layers), ``disc_select_on_dev`` (keep each member's
    weights with the best AUC on the discriminator dev set, evaluated ``disc_evals_per_epoch`` times
    per epoch);
    decoding: ``num_beams`` (4), ``decode_tag_dictionary`` (tagging tasks: a word seen at least this many times in
    training may only get one of its training tags, :func:`helpers.seq2seq.tagging.tag_dictionary`; ``None``: off).
    """

    parser_config: str | tuple = "tiny"
    vocab_min_freq: int = 1
    parser_steps: int = 800
    parser_batch_size: int = 64
    parser_lr: float = 3e-3
    parser_unk_singletons: float = 0.0
    parser_unk_signatures: bool = False
    parser_schedule: str | None = None
    snapshot_every: int = 100
    n_snapshots: int = 5
    n_mine: int | None = 600
    negative_snapshots: int | None = None
    negatives_per_example: int = 1
    max_negative_ratio: float | None = 1.0
    disc_kind: str = "minilm"
    n_members: int = 5
    disc_epochs: int = 1
    disc_batch_size: int = 32
    disc_lr: float = 5e-5
    disc_max_length: int = 256
    disc_freeze_layers: int = 0
    disc_select_on_dev: bool = True
    disc_evals_per_epoch: int = 2
    num_beams: int = 4
    beam_batch_size: int = 128
    decode_tag_dictionary: int | None = None
    seed: int = 0

    def key(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["parser_config"] = resolve_parser_config(
            dict(self.parser_config) if isinstance(self.parser_config, tuple) else self.parser_config
        ).to_dict()
        for name in _ADDED_LATER:  # off (at its default), a field added later leaves keys (and caches) as they were
            if not d[name]:
                del d[name]
        return d


def check_snapshots(cfg: PipelineConfig) -> PipelineConfig:
    """``cfg``, after checking that its ``n_snapshots`` snapshots every ``snapshot_every`` steps fit in
    ``parser_steps`` (the negatives must come from checkpoints of this run)."""
    if cfg.snapshot_every * cfg.n_snapshots > cfg.parser_steps:
        raise InputValidationError(
            f"snapshot_every × n_snapshots = {cfg.snapshot_every * cfg.n_snapshots} exceeds parser_steps "
            f"({cfg.parser_steps}): the negatives must come from checkpoints of this run"
        )
    return cfg


@dataclass
class SetResult:
    """The final parser's outputs and the discriminators' votes on one set; ``golds`` and ``correct`` are ``None``
    on an unlabelled set."""

    name: str
    shift: str
    inputs: list[str]
    golds: list[str] | None
    predictions: list[str]
    confidence: np.ndarray
    correct: np.ndarray | None
    votes: np.ndarray

    @property
    def labelled(self) -> bool:
        return self.correct is not None

    @property
    def accuracy(self) -> float:
        """Gold exact-match accuracy (fraction); NaN on an unlabelled set."""
        return float(self.correct.mean()) if self.labelled else float("nan")


@dataclass
class TaskResult:
    """Everything :func:`run_task` produced for one task."""

    task: str
    dev: SetResult
    sets: dict[str, SetResult]
    disc_train: DiscriminatorData
    disc_dev: DiscriminatorData
    disc_dev_votes: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    members: list[dict[str, Any]] = field(default_factory=list)  # per member: seed, attempts, dev AUC, vote rate

    def member_rows(self) -> list[dict[str, Any]]:
        """One row per discriminator: its seed, training attempts, dev AUC (of the Correct-minus-Incorrect logit,
        the selection score), Correct-vote rate on the dev set and whether it passed the degenerate-member check."""
        return [{"task": self.task, "member": k, **m} for k, m in enumerate(self.members)]

    def info_row(self) -> dict[str, Any]:
        """One overview row: parser size / resume / loss, discriminator data sizes and the discriminators' mean
        accuracy, balanced accuracy, Correct-Recall and Incorrect-Recall on their dev set, parser dev accuracy."""
        v, y = self.disc_dev_votes, self.disc_dev.labels[:, None]
        pos, neg = y[:, 0] == 1, y[:, 0] == 0
        cr = float((v[pos] == 1).mean()) if pos.any() else float("nan")
        ir = float((v[neg] == 0).mean()) if neg.any() else float("nan")
        return {
            "parser_params": self.info.get("n_params"),
            "parser_resumed_from": self.info.get("parser_resumed_from"),
            "parser_final_loss": self.info.get("parser_final_loss"),
            "disc_train": len(self.disc_train),
            "disc_train_negatives": self.disc_train.n_negative,
            "disc_dev": len(self.disc_dev),
            "disc_dev_negatives": self.disc_dev.n_negative,
            "disc_dev_accuracy": float((v == y).mean()) if len(v) else float("nan"),
            "disc_dev_balanced_accuracy": (cr + ir) / 2,
            "disc_dev_CR": cr,
            "disc_dev_IR": ir,
            "parser_dev_accuracy": self.dev.accuracy,
            # how well the members' votes separate the final parser's correct from wrong dev outputs (not the
            # snapshot negatives they were selected on)
            "vote_auc_final_dev": roc_auc(scores=self.dev.votes.mean(1), labels=self.dev.correct.astype(int)),
            # the same separation by output length alone (shorter = Correct): what a member that learnt only
            # length would reach, on the final dev outputs and on the discriminators' own dev set
            "length_auc_final_dev": _length_auc(self.dev.predictions, self.dev.correct),
            "length_auc_disc_dev": _length_auc(self.disc_dev.outputs, self.disc_dev.labels),
        }


def _length_auc(outputs, labels) -> float:
    """AUC of minus the output length (tokens) for separating correct (1) from wrong (0) outputs; NaN with one
    class only (as :func:`helpers.metrics.roc_auc`) or none."""
    labels = np.asarray(labels).astype(int)
    if len(labels) == 0:
        return float("nan")
    return roc_auc(scores=-np.array([len(o.split()) for o in outputs], dtype=float), labels=labels)


def parser_cache(task: Seq2SeqTask, cfg: PipelineConfig) -> tuple[WordVocab, str, Path]:
    """The parser's vocabulary, its cache key (data, vocabulary, parser settings, snapshots, seed) and folder."""
    vocab = WordVocab.build([p[0] for p in task.train] + [p[1] for p in task.train], min_freq=cfg.vocab_min_freq,
                            unk_signatures=cfg.parser_unk_signatures)  # fmt: skip
    base = {"task": task.name, "train": cache_key(task.train), "vocab": vocab.to_list()}
    pkey = cache_key(
        {
            **base,
            "cfg": {k: v for k, v in cfg.key().items() if k.startswith("parser")},
            "K": cfg.snapshot_every,
            "S": cfg.n_snapshots,
            "seed": cfg.seed,
            "code": code_version(*PARSER_CODE),
        }
    )
    return vocab, pkey, cache_dir() / "checkpoints" / f"p1_parser_{task.name}_{pkey[:16]}"


def parser_is_trained(task: Seq2SeqTask, cfg: PipelineConfig) -> bool:
    """Whether :func:`run_task` would find this task's parser fully trained in the cache (no training needed)."""
    ckdir = parser_cache(task, cfg)[2]
    return (ckdir / f"ckpt_step{cfg.parser_steps:09d}.pt").exists()


def run_task(
    task: Seq2SeqTask,
    config: PipelineConfig = PipelineConfig(),
    *,
    device: str = "auto",
    progress: bool = True,
) -> TaskResult:
    """Train (or restore) the parser and the discriminator ensemble of ``task`` and label every set (paper 1).

    Returns
    -------
    TaskResult
        ``sets[name]`` holds predictions, confidence (product of token probabilities of the top beam), gold
        correctness (exact match) and the (n, n_members) vote matrix; ``dev`` the same on the ID dev set (the
        reference set of DoC / ATC); ``disc_dev`` / ``disc_dev_votes`` the discriminators' dev set (Sec. App. B.1).
    """
    cfg = check_snapshots(config)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    vocab, pkey, ckdir = parser_cache(task, cfg)
    pconf = dict(cfg.parser_config) if isinstance(cfg.parser_config, tuple) else cfg.parser_config
    model = build_parser(len(vocab), pconf, seed=cfg.seed)
    fitres = train_parser(
        model,
        task.train,
        vocab,
        PARSER_SETTINGS.replace(max_steps=cfg.parser_steps, batch_size=cfg.parser_batch_size, lr=cfg.parser_lr,
                                seed=cfg.seed, scheduler=cfg.parser_schedule, checkpoint_dir=ckdir, device=device,
                                progress=progress),
        unk_singletons=cfg.parser_unk_singletons,
        snapshot_every=cfg.snapshot_every,
        n_snapshots=cfg.n_snapshots,
    )
    timings["parser"] = time.perf_counter() - t0
    decode_kw = dict(
        num_beams=cfg.num_beams,
        max_new_tokens=task.max_new_tokens,
        batch_size=cfg.beam_batch_size,
        device=device,
    )

    t1 = time.perf_counter()
    disc_sets, steps = _negative_sets(task, cfg, vocab, pkey, ckdir, pconf, decode_kw)
    timings["negatives"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    outs = _final_outputs(task, cfg, model, vocab, pkey, fitres.steps, decode_kw)
    timings["decode"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    votes_for, member_stats = _vote_function(task, cfg, pkey, disc_sets, device=device, progress=progress)
    render = discriminator_text(task.name)
    disc_dev_votes = votes_for(disc_sets["dev"].inputs, disc_sets["dev"].outputs)
    results = {}
    for name, pairs in (("dev", task.dev), *task.test_sets.items()):
        inputs, golds = [p[0] for p in pairs], [p[1] for p in pairs]
        golds = None if any(g is None for g in golds) else golds  # an unlabelled set: no gold, no accuracy
        preds = [str(x) for x in outs[name]["top"]]
        v = votes_for(inputs, [render(p) for p in preds])
        results[name] = SetResult(
            name,
            "ID" if name == "dev" else task.shift[name],
            inputs,
            golds,
            preds,
            outs[name]["confidence"].astype(np.float64),
            None if golds is None else exact_match(preds, golds),
            v,
        )
    timings["discriminators"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0
    info = {
        "vocab_size": len(vocab),
        "parser_steps": fitres.steps,
        "parser_resumed_from": fitres.resumed_from,
        "parser_final_loss": fitres.final_loss,
        "snapshot_steps": steps,
        "checkpoint_dir": str(ckdir),
        "n_params": int(sum(p.numel() for p in model.parameters())),
        "sizes": task.sizes(),
    }
    dev = results.pop("dev")
    return TaskResult(
        task.name, dev, results, disc_sets["train"], disc_sets["dev"], disc_dev_votes, timings, info, member_stats()
    )


def run_task_unit(job: tuple[Seq2SeqTask, PipelineConfig]) -> TaskResult:
    """``run_task(task, config, progress=False)`` for ``job = (task, config)``: one task's whole pipeline as a unit
    of :func:`helpers.parallel.map_units`, so that notebook 01 runs its tasks side by side."""
    task, config = job
    return run_task(task, config, progress=False)


def decode_constraints_for(task: Seq2SeqTask, cfg: PipelineConfig, inputs: Sequence[str]) -> dict:
    """The task's decoding constraints for these inputs (tag dictionary per ``cfg.decode_tag_dictionary``)."""
    return task.decode_constraints(inputs, dictionary_min_count=cfg.decode_tag_dictionary)


def _tag_key(task, cfg) -> dict:
    """Cache-key part of a tagging task's decoding constraints (empty for free seq2seq tasks; the dictionary
    entry only when it is on, so keys made before it existed stay valid)."""
    if not task.is_tagging:
        return {}
    on = cfg.decode_tag_dictionary is not None
    return {"tags": list(task.tag_set), **({"dict": cfg.decode_tag_dictionary} if on else {})}


def _search_key(task) -> dict:
    """Cache-key part of the beam search: a free seq2seq task's beams changed when the search became canonical
    (``early_stopping="never"``, see :func:`helpers.seq2seq.parser.beam_search`); a tagger's fixed-length beams
    did not (every beam ends at the same step), so its keys, and caches, stay as they were."""
    return {} if task.is_tagging else {"search": "canonical"}


def _negative_sets(task, cfg, vocab, pkey, ckdir, pconf, decode_kw) -> tuple[dict, list]:
    """Discriminator train/dev sets: wrong beam outputs of the first ``n_snapshots`` parser snapshots on (a sample
    of) the training set and on the dev set, cached per part; returns them and the snapshot steps used.

    With ``cfg.negative_snapshots = m`` only the last m of those snapshots are mined.  The paper (App. B.1) mines
    the first 5 checkpoints of a *pretrained* T5 being fine-tuned, whose errors already resemble the final
    parser's; a parser trained from scratch may err differently early on, and this option tests that.  Notebook 01
    keeps the paper's rule (docs/reproductions/p1_discriminator_bounds.md compares the two).
    """
    rng = np.random.default_rng(cfg.seed)
    mine = (
        task.train
        if cfg.n_mine is None or cfg.n_mine >= len(task.train)
        else [task.train[i] for i in np.sort(rng.choice(len(task.train), cfg.n_mine, replace=False))]
    )
    steps = sorted(snapshot_paths(ckdir))[: cfg.n_snapshots]
    if len(steps) < cfg.n_snapshots:  # no snapshot, no negative: fail here, not as "0 negatives" in training
        raise InputValidationError(
            f"parser snapshots: expected {cfg.n_snapshots} in {ckdir / 'snapshots'}, found {len(steps)}; train the "
            "parser first (run_task does), or delete the folder to retrain"
        )
    if cfg.negative_snapshots is not None:
        if not 1 <= cfg.negative_snapshots <= len(steps):
            raise InputValidationError(
                f"negative_snapshots: expected 1..{len(steps)} (the snapshots kept), got {cfg.negative_snapshots}"
            )
        steps = steps[-cfg.negative_snapshots :]
    snap_model = build_parser(len(vocab), pconf, seed=cfg.seed)

    def _decoder(pairs):
        def decode(step: int) -> list[list[str]]:
            load_snapshot(snap_model, snapshot_paths(ckdir)[step])
            inputs = [p[0] for p in pairs]
            return beam_search(snap_model, vocab, inputs, **decode_kw, **decode_constraints_for(task, cfg, inputs)).beams

        return decode

    render = discriminator_text(task.name)
    disc_sets = {}
    for part, pairs in (("train", mine), ("dev", task.dev)):
        bkey = {
            "parser": pkey,
            "data": cache_key(pairs),
            "beams": cfg.num_beams,
            "max_new": task.max_new_tokens,
            **_tag_key(task, cfg),
            **_search_key(task),
        }
        nkey = {
            **bkey,
            "steps": steps,
            "per": cfg.negatives_per_example,
            "ratio": cfg.max_negative_ratio,
            "seed": cfg.seed,
            "code": code_version(*NEGATIVES_CODE),
        }

        def compute(pairs=pairs, bkey=bkey):
            beams = snapshot_beams(_decoder(pairs), steps, key=bkey)
            ni, no = mine_negatives(
                beams,
                [p[0] for p in pairs],
                [p[1] for p in pairs],
                per_example=cfg.negatives_per_example,
                seed=cfg.seed,
            )
            d = discriminator_dataset(
                [p[0] for p in pairs],
                [p[1] for p in pairs],
                ni,
                no,
                max_negative_ratio=cfg.max_negative_ratio,
                seed=cfg.seed,
            )
            return {
                "inputs": np.array(d.inputs, dtype=str),
                "outputs": np.array(d.outputs, dtype=str),
                "labels": d.labels,
            }

        arr = cached_arrays("p1_negatives", nkey, compute)
        disc_sets[part] = DiscriminatorData(
            [str(x) for x in arr["inputs"]],
            [render(str(x)) for x in arr["outputs"]],
            arr["labels"].astype(np.int64),
        )
    return disc_sets, steps


def _final_outputs(task, cfg, model, vocab, pkey, final_step, decode_kw) -> dict:
    """Top beam and its confidence of the final parser on the dev set and every test set (cached per set)."""
    outs = {}
    for name, pairs in (("dev", task.dev), *task.test_sets.items()):
        # dev: the training-side budget; a test set: the budget its *inputs* imply (no gold output is read)
        budget = task.max_new_tokens if name == "dev" else task.decode_budget([p[0] for p in pairs])
        fkey = {
            "parser": pkey,
            "step": final_step,
            "data": cache_key(pairs),
            "beams": cfg.num_beams,
            "max_new": budget,
            "final": True,
            **_tag_key(task, cfg),
            **_search_key(task),
        }

        def compute(pairs=pairs, budget=budget):
            inputs = [p[0] for p in pairs]
            r = beam_search(
                model, vocab, inputs, **{**decode_kw, "max_new_tokens": budget}, **decode_constraints_for(task, cfg, inputs)
            )
            return {"top": np.array(r.top, dtype=str), "confidence": r.confidence}

        outs[name] = cached_arrays("seq2seq_beams", fkey, compute)
    return outs


def _vote_function(task, cfg, pkey, disc_sets, *, device, progress):
    """``votes_for(inputs, outputs)``: the (n, n_members) votes of the discriminator ensemble, cached per set; the
    ensemble is trained (or restored from its checkpoints) only when some votes are not cached."""
    dkey = cache_key(
        {
            "parser": pkey,
            "train": cache_key(disc_sets["train"].items()),
            "dev": cache_key(disc_sets["dev"].items()) if cfg.disc_select_on_dev else None,
            "cfg": {k: v for k, v in cfg.key().items() if k.startswith(("disc", "n_members"))},
            "seed": cfg.seed,
            "recipe": TRAINING_RECIPE,
            "code": code_version(*DISCRIMINATOR_CODE),
        }
    )
    members: list = []
    ckroot = cache_dir() / "checkpoints" / f"p1_disc_{task.name}_{dkey[:16]}"

    def get_members():
        if not members:
            dv = WordVocab.build([*disc_sets["train"].inputs, *disc_sets["train"].outputs, SEP])
            members.extend(
                train_discriminators(
                    disc_sets["train"],
                    DISCRIMINATOR_SETTINGS.replace(epochs=cfg.disc_epochs, batch_size=cfg.disc_batch_size,
                                                   lr=cfg.disc_lr, seed=cfg.seed, checkpoint_dir=ckroot,
                                                   device=device, progress=progress),
                    kind=cfg.disc_kind,
                    n_members=cfg.n_members,
                    vocab=dv,
                    max_length=cfg.disc_max_length,
                    model_kwargs={"freeze_layers": cfg.disc_freeze_layers} if cfg.disc_kind == "minilm" else None,
                    dev=disc_sets["dev"] if cfg.disc_select_on_dev else None,
                    evals_per_epoch=cfg.disc_evals_per_epoch,
                )
            )
        return members

    def votes_for(inputs: list[str], outputs: list[str]) -> np.ndarray:
        vkey = {"disc": dkey, "inputs": cache_key(inputs), "outputs": cache_key(outputs)}
        return cached_arrays(
            "p1_votes",
            vkey,
            lambda: {"votes": discriminator_votes(get_members(), inputs, outputs, device=device)},
        )["votes"]

    def member_stats() -> list[dict]:
        """Each member's statistics, from the trained members or from their files (votes may all be cached)."""
        if members:
            return [dict(getattr(m, "dev_stats", {})) for m, _ in members]
        paths = [ckroot / f"member{k}.json" for k in range(cfg.n_members)]
        return [json.loads(p.read_text()) if p.exists() else {} for p in paths]

    return votes_for, member_stats
