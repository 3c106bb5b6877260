"""Paper 4 (notebook ``04_attribution_ranking``): model suites, the ranking experiment and the direction protocol.

* :mod:`~helpers.experiments.p4_attribution.suites` -- word-level / MiniLM models on texts or pairs, trained and
  predicted with caches, and :func:`run_setting` (one OOD set: true accuracies, attributions, factors, baselines,
  bootstrap ranking accuracy on the informative model pairs);
* :mod:`~helpers.experiments.p4_attribution.directions` -- the held-out-direction protocol: each factor's direction
  (and, for the window factor, signed vs |a|) is chosen on an independent suite and applied unchanged.
"""

from helpers.experiments.p4_attribution import directions, suites
from helpers.experiments.p4_attribution.directions import *  # noqa: F403
from helpers.experiments.p4_attribution.suites import *  # noqa: F403

#: the public names of the two modules (their own ``__all__``), re-exported here
__all__ = [*suites.__all__, *directions.__all__]
