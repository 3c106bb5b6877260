"""Notebook 05 (paper 5, Meta-Distribution Energy): every set-level measure through one meta-set regression,
the cached per-setup pipeline, and the tables, stress tests and paper constants of the notebook.

:mod:`.measures` holds the measures, tables and stress tests; :mod:`.protocol` the authors' 95-set CIFAR-10-C
protocol and the paper-vs-ours table; :mod:`.setups` the four setups (sets, models, cache
keys) that notebook 06 reuses.  The models come from :mod:`helpers.models` (text: :mod:`helpers.models.zoo`),
the meta-sets from :mod:`helpers.data.metaset`.
"""

from helpers.experiments.p5_mde.measures import *  # noqa: F401,F403
from helpers.experiments.p5_mde.measures import __all__ as _measures_all
from helpers.experiments.p5_mde.protocol import *  # noqa: F401,F403
from helpers.experiments.p5_mde.protocol import __all__ as _protocol_all
from helpers.experiments.p5_mde.setups import *  # noqa: F401,F403
from helpers.experiments.p5_mde.setups import __all__ as _setups_all

__all__ = [*_measures_all, *_protocol_all, *_setups_all]
