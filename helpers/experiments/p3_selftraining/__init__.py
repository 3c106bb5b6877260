"""Notebook 03 (paper 3, self-training ensembles): domain pairs, cached one-pair runs and the notebook's tables.

:mod:`.pairs` builds the Amazon and digits source/target pairs; :mod:`.runs` the cached runs of every method on
one pair (:func:`evaluate_pair`); :mod:`.tables` Table 1 against the paper, the settings table and the ablation.
"""

from helpers.experiments.p3_selftraining.pairs import *  # noqa: F401,F403
from helpers.experiments.p3_selftraining.pairs import __all__ as _pairs_all
from helpers.experiments.p3_selftraining.runs import *  # noqa: F401,F403
from helpers.experiments.p3_selftraining.runs import __all__ as _runs_all
from helpers.experiments.p3_selftraining.tables import *  # noqa: F401,F403
from helpers.experiments.p3_selftraining.tables import __all__ as _tables_all

__all__ = [*_pairs_all, *_runs_all, *_tables_all]
