"""Token attributions, attribution factors and the few-shot ranking evaluation of paper 4.

* :mod:`helpers.attribution.attributions` -- :func:`attribute` (IG / SHAP / LIME, batched, pair-aware, cached);
* :mod:`helpers.attribution.factors` -- window / MAX-DIFF / SUM-DIFF / INDEX-DIFF / FIRST-TOK / CONST /
  SWAP-AVG / SWAP-MAX-DIFF;
* :mod:`helpers.attribution.evaluation` -- bootstrap pairwise ranking accuracy (Appendix B) and baselines;
* :class:`TinyTransformer` (from :mod:`helpers.models.tiny_transformer`) -- the tiny from-scratch Transformer.
"""

from helpers.attribution.attributions import (
    ATTRIBUTION_COLUMNS,
    METHODS,
    HFTokenizer,
    WordTokenizer,
    as_tokenizer,
    attribute,
    model_fingerprint,
)
from helpers.attribution.evaluation import (
    BASELINES,
    RankingResult,
    baseline_scores,
    bootstrap_indices,
    guess_accuracy,
    informative_pairs,
    pairwise_ranking_accuracy,
    ranking_table,
)
from helpers.attribution.factors import FACTORS, factor_matrix, factor_values
from helpers.models.tiny_transformer import TinyTransformer

__all__ = [
    "ATTRIBUTION_COLUMNS",
    "METHODS",
    "HFTokenizer",
    "WordTokenizer",
    "as_tokenizer",
    "attribute",
    "model_fingerprint",
    "BASELINES",
    "RankingResult",
    "baseline_scores",
    "bootstrap_indices",
    "guess_accuracy",
    "informative_pairs",
    "pairwise_ranking_accuracy",
    "ranking_table",
    "FACTORS",
    "factor_matrix",
    "factor_values",
    "TinyTransformer",
]
