"""Paper claims: registered once, decided by an interval, published certified by the error rate of their rule.

=============================  ======================================================================================
:mod:`~helpers.claims.registry`  :class:`Claim` (the paper's words, a criterion fixed in advance, its rule's
                                 :class:`Power`), recording and collecting a run's outcomes, the tally
:mod:`~helpers.claims.decision`  the interval of an estimate (exact binomial, bootstraps) and what it says
:mod:`~helpers.claims.seeds`     a claim over seeds that share (or redraw) their units
:mod:`~helpers.claims.rules`     how each kind of rule is simulated
:mod:`~helpers.claims.power`     size, power and false-fail rate of each rule at its published sample
:mod:`~helpers.claims.verdicts`  the published verdict: the interval's, certified by those rates
:mod:`~helpers.claims.refresh`   the claim packages of the experiments wing and the one command that regenerates
                                 every claims file (``python -m helpers claims refresh``)
=============================  ======================================================================================

``docs/claims.md`` is the recipe for adding a claim.
"""

from helpers.claims.decision import (
    INTERVAL_VERDICTS,
    Decision,
    bootstrap_clusters,
    bootstrap_decision,
    bootstrap_groups,
    clopper_pearson,
    share_decision,
    verdict,
)
from helpers.claims.power import MEI_SHARE, Power
from helpers.claims.registry import (
    CLAIM_COLUMNS,
    VERDICTS,
    Claim,
    claim_entry,
    claim_kinds,
    collect_claims,
    decide_and_record,
    format_estimate,
    record_claim,
    stability_table,
    superseded,
    tally,
)
from helpers.claims.rules import GroupsRule, MeanRule, PointRule, ShareRule, SimulatedRule

__all__ = [
    "Claim", "Decision", "Power", "VERDICTS", "INTERVAL_VERDICTS", "CLAIM_COLUMNS", "verdict", "clopper_pearson",
    "share_decision", "bootstrap_decision", "bootstrap_groups", "bootstrap_clusters", "record_claim",
    "decide_and_record", "collect_claims", "stability_table", "tally", "superseded", "claim_kinds", "claim_entry",
    "format_estimate", "MEI_SHARE", "ShareRule", "MeanRule", "GroupsRule", "SimulatedRule", "PointRule",
]  # fmt: skip
