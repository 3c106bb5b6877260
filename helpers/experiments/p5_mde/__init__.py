"""Notebook 05 (paper 5, Meta-Distribution Energy): every set-level measure through one meta-set regression,
the cached per-setup pipeline, and the tables, stress tests and paper constants of the notebook.

Everything is in :mod:`.measures`; the models come from :mod:`helpers.models` (text: :mod:`helpers.models.zoo`),
the meta-sets from :mod:`helpers.data.metaset`.
"""

from helpers.experiments.p5_mde.measures import *  # noqa: F401,F403
from helpers.experiments.p5_mde.measures import __all__  # noqa: F401
