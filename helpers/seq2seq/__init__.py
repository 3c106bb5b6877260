"""Seq2seq parsers and correctness discriminators for paper 1 ("Predicting generalization performance with
correctness discriminators"): word vocabularies, a T5-architecture parser trained from scratch with beam search
and sequence confidences, negative mining from early checkpoints, discriminator ensembles.  The bounds themselves live in
:mod:`helpers.estimators.bounds`; paper 1's task loaders, cached end-to-end pipeline and result tables live in
:mod:`helpers.experiments.p1_bounds`.
"""

from helpers.seq2seq.discriminators import (
    DISCRIMINATOR_KINDS,
    ScratchPairClassifier,
    ScratchPairCollator,
    discriminator_votes,
    make_discriminator,
    train_discriminators,
)
from helpers.seq2seq.negatives import DiscriminatorData, discriminator_dataset, mine_negatives, snapshot_beams
from helpers.seq2seq.parser import (
    PRESETS,
    BeamResult,
    ParserConfig,
    Seq2SeqDataset,
    beam_search,
    build_parser,
    collate_seq2seq,
    exact_match,
    load_snapshot,
    sequence_probability,
    snapshot_paths,
    train_parser,
)
from helpers.seq2seq.vocab import WordVocab

__all__ = [
    "WordVocab",
    "ParserConfig",
    "PRESETS",
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
    "DiscriminatorData",
    "mine_negatives",
    "discriminator_dataset",
    "snapshot_beams",
    "DISCRIMINATOR_KINDS",
    "ScratchPairClassifier",
    "ScratchPairCollator",
    "make_discriminator",
    "train_discriminators",
    "discriminator_votes",
]
