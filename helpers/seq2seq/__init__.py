"""Seq2seq parsers and correctness discriminators for paper 1 ("Predicting generalization performance with
correctness discriminators"): word vocabularies, a T5-architecture parser trained from scratch with beam search
and sequence confidences, negative mining from early checkpoints, discriminator ensembles, and the
most-frequent-tag baseline for tagging tasks.  The bounds themselves live in
:mod:`helpers.estimators.bounds`; paper 1's task loaders, cached end-to-end pipeline and result tables live in
:mod:`helpers.experiments.p1_bounds`.
"""

from helpers.seq2seq import discriminators, negatives, parser, tagging, vocab
from helpers.seq2seq.discriminators import *  # noqa: F403
from helpers.seq2seq.negatives import *  # noqa: F403
from helpers.seq2seq.parser import *  # noqa: F403
from helpers.seq2seq.tagging import *  # noqa: F403
from helpers.seq2seq.vocab import *  # noqa: F403

#: the public names of the five modules (their own ``__all__``), re-exported here
__all__ = [*vocab.__all__, *parser.__all__, *negatives.__all__, *discriminators.__all__, *tagging.__all__]
