"""Notebook 08 (which model to deploy on an unlabelled set): every estimator ranks the models of the project's zoos
(:mod:`.zoos`: notebook 02's sentiment suite, the CIFAR-10 ResNets and notebook 05's text models, read from those
notebooks' caches), per target set and shift family (:mod:`.tables`); its claims are in :mod:`.claims`."""

from helpers.experiments.p8_ranking.settings import ZOOS, RankingSettings
from helpers.experiments.p8_ranking.tables import (
    ID_ACCURACY,
    advice,
    best_by_family,
    family_table,
    ranking_table,
)
from helpers.experiments.p8_ranking.zoos import Collection, zoo_collections

__all__ = [
    "ZOOS",
    "RankingSettings",
    "Collection",
    "zoo_collections",
    "ID_ACCURACY",
    "ranking_table",
    "family_table",
    "best_by_family",
    "advice",
]
