"""Paper claims: each registered once, with the paper's words, a criterion fixed in advance and a verdict with its
uncertainty.

A :class:`Claim` is one statement of a paper (its words and where they stand), the quantity that tests it, the
criterion (a threshold on that quantity and its direction, the paper's or ours with the reason, never changed once
its verdict is on record) and the function that decides it from what a notebook computed.  Each experiments package holds
its paper's claims in ``claims.py`` (``CLAIMS``); the notebooks call them and record the outcome with
:func:`record_claim`; :func:`collect_claims` reads a run's outcomes back into one row per claim, the table behind
``figures/claims.csv``.

Each outcome is decided by a 95 % interval (:mod:`helpers.claims.decision`) and published certified by its rule's
error rates (:mod:`helpers.claims.verdicts`).

A criterion never changes after its result is known: a new reading becomes a new claim id.  Readings chosen after
seeing results are registered with ``exploratory=True`` and kept out of the tally, as are the benchmark's own
hypotheses (``own=True``).  Every claim carries two plausible input cases (``cases``), one where it holds and one
where it fails, which the tests decide (a claim that cannot fail is not a claim).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from helpers.claims.decision import DIRECTIONS, Decision, verdict
from helpers.errors import InputValidationError
from helpers.run.results import results_dir

__all__ = ["Claim", "VERDICTS", "CLAIM_COLUMNS", "record_claim", "decide_and_record", "collect_claims",
           "stability_table", "tally", "superseded", "claim_kinds", "claim_entry", "format_estimate"]  # fmt: skip

#: a claim's published verdict (:mod:`helpers.claims.verdicts`): the interval's where its rule's error rate
#: certifies it, ``indistinguishable`` where the rule's size exceeds 0.05, ``undecided`` / ``underpowered`` by power,
#: ``untested`` where the project has no data for it
VERDICTS = ("holds", "fails", "undecided", "underpowered", "indistinguishable", "untested")
#: the columns of ``figures/claims.csv`` (one row per distinct claim)
CLAIM_COLUMNS = [
    "paper", "id", "statement", "source", "quantity", "criterion", "criterion_source", "estimate", "low", "high",
    "verdict", "setups_held", "setups", "seeds_held", "seeds", "own", "exploratory", "notebook", "rationale",
    "seed_verdicts", "superseded_by", "group", "interval_verdict", "size", "size_draws", "size_high", "power",
    "power_draws", "power_low", "false_fail", "false_fail_draws", "false_fail_high", "power_at", "effect_source",
    "needed", "paper_estimate", "paper_verdict", "units", "run_estimate", "run_low", "run_high", "run_verdict", "note",
]  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One registered claim.

    Parameters
    ----------
    id : str
        Unique id, ``"<paper>.<name>"`` (e.g. ``"p1.gold_within_bounds"``).
    paper : str
        ``"P1"`` ... ``"P5"``, or ``"benchmark"`` for the benchmark's own hypotheses.
    statement : str
        The paper's words (or, for an own claim, ours).
    source : str
        Where the words stand: section, table, figure.
    quantity : str
        What :attr:`decide` estimates, with its unit.
    threshold, direction : float, str
        The criterion ``quantity <direction> threshold``; ``direction`` is one of ``>=``, ``>``, ``<=``, ``<``.
    criterion_source : str
        ``"paper"`` (the paper's own number or wording) or ``"ours"`` (then ``rationale`` says why).
    rationale : str
        Why this criterion, and how several setups give one verdict.
    decide : callable
        ``decide(**inputs) -> Decision``.
    cases : mapping
        ``{"holds": make_inputs, "fails": make_inputs}``: zero-argument callables returning ``decide``'s keyword
        arguments for a plausible frame where the claim holds and one where it fails (the tests decide both).
    own, exploratory : bool
        The benchmark's own hypothesis; a reading chosen after results were known.  Both stay out of the tally.
    superseded_by : str
        The id of the claim that replaced this one's rule (its record stays; it leaves the tally).
    group : str
        ``"paper"`` (a claim of the five papers: their tally), ``"method"`` (a claim of another method's own paper,
        decided on the same data, counted apart) or ``"own"`` (the benchmark's); default: ``"own"`` for an own claim,
        else ``"paper"``.
    untested : str
        Why the project cannot decide the claim (its data are not available); the verdict is ``untested`` and
        ``decide`` is not called.
    power : helpers.claims.Power
        How the claim's rule is simulated for its error rates (:mod:`helpers.claims.power`): its verdict is
        published only as far as they certify it.
    """

    id: str
    paper: str
    statement: str
    source: str
    quantity: str
    threshold: float
    direction: str
    criterion_source: str
    rationale: str
    decide: Callable[..., Decision]
    cases: Mapping[str, Callable[[], dict[str, Any]]] = field(default_factory=dict)
    own: bool = False
    exploratory: bool = False
    superseded_by: str = ""
    group: str = ""
    untested: str = ""
    power: Any = None

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise InputValidationError(f"direction: expected one of {DIRECTIONS}, got {self.direction!r}")
        if self.criterion_source not in ("paper", "ours"):
            raise InputValidationError(f"criterion_source: expected 'paper' or 'ours', got {self.criterion_source!r}")
        if self.group not in ("", "paper", "method", "own"):
            raise InputValidationError(f"group: expected 'paper', 'method' or 'own', got {self.group!r}")
        if not self.group:
            object.__setattr__(self, "group", "own" if self.own else "paper")
        if not self.source.strip() or not self.statement.strip():
            raise InputValidationError(f"claim {self.id!r}: statement and source must not be empty")

    @property
    def criterion(self) -> str:
        return f"{self.quantity} {self.direction} {self.threshold:g} (95 % interval)"

    def verdict(self, decision: Decision) -> str:
        """``holds`` / ``fails`` / ``undecided`` for ``decision`` under this claim's criterion (:func:`verdict`);
        ``untested`` for a claim the project has no data for."""
        if self.untested:
            return "untested"
        return verdict(decision.low, decision.high, self.threshold, self.direction)

    def run(self, **inputs: Any) -> tuple[Decision, str]:
        """Decide on ``inputs``: the decision and its verdict (an untested claim: no decision, its reason)."""
        decision = Decision(float("nan"), float("nan"), float("nan"), note=self.untested) if self.untested else (
            self.decide(**inputs))
        return decision, self.verdict(decision)


def _claims_dir(results: str | os.PathLike[str] | None) -> Path:
    base = Path(results) if results is not None else results_dir()
    path = base / "claims"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _plain(v: Any) -> Any:
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def record_claim(
    claim: Claim, decision: Decision, *, notebook: str | None = None, results: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Append the outcome of ``claim`` to ``<results>/claims/<notebook>.jsonl`` (one JSON line; the last line of a
    claim id wins when read back) and write its per-setup detail, if any, beside it as
    ``<notebook>.<claim id>.csv``."""
    nb = notebook or os.environ.get("HELPERS_NOTEBOOK") or "interactive"
    entry = claim_entry(claim, decision, notebook=nb)
    folder = _claims_dir(results)
    with open(folder / f"{nb}.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")
    if decision.detail is not None and len(decision.detail):
        decision.detail.to_csv(folder / f"{nb}.{claim.id}.csv", index=False)
    return entry


def claim_entry(claim: Claim, decision: Decision, *, notebook: str) -> dict[str, Any]:
    """The record of one outcome of ``claim`` (what :func:`record_claim` writes, one row of ``claims.csv``)."""
    return {
        "notebook": notebook, "paper": claim.paper, "id": claim.id, "statement": claim.statement, "source": claim.source,
        "quantity": claim.quantity, "criterion": claim.criterion, "criterion_source": claim.criterion_source,
        "rationale": claim.rationale, "estimate": _plain(decision.estimate), "low": _plain(decision.low),
        "high": _plain(decision.high), "verdict": claim.verdict(decision), "setups_held": decision.setups_held,
        "setups": decision.setups, "own": claim.own, "exploratory": claim.exploratory, "note": decision.note,
        "superseded_by": claim.superseded_by, "group": claim.group,
        "profile": os.environ.get("HELPERS_PROFILE", ""),
    }  # fmt: skip


def decide_and_record(claims: Sequence[Claim], inputs: Mapping[str, Mapping[str, Any]], **kw: Any) -> pd.DataFrame:
    """Decide every claim whose id is in ``inputs`` (``{id: decide's keyword arguments}``), record each outcome
    (:func:`record_claim`) and return them as a frame (id, estimate, low, high, verdict, setups), for display."""
    by_id = {c.id: c for c in claims}
    unknown = sorted(set(inputs) - set(by_id))
    if unknown:
        raise InputValidationError(f"inputs: unknown claim ids {unknown}; registered: {sorted(by_id)}")
    rows = []
    for cid, kwargs in inputs.items():
        entry = record_claim(by_id[cid], by_id[cid].run(**kwargs)[0], **kw)
        rows.append({k: entry[k] for k in ("id", "estimate", "low", "high", "verdict", "setups_held", "setups",
                                           "exploratory")})  # fmt: skip
    return pd.DataFrame(rows)


#: columns that publishing adds (seeds, the rule's error rates); a run's records do not have them
_PUBLISH_ONLY = ("seeds_held", "seeds", "seed_verdicts", "interval_verdict", "size", "size_draws", "size_high",
                 "power", "power_draws", "power_low", "false_fail", "false_fail_draws", "false_fail_high", "power_at",
                 "effect_source", "needed", "paper_estimate", "paper_verdict", "units", "run_estimate", "run_low",
                 "run_high", "run_verdict")  # fmt: skip


def collect_claims(results: str | os.PathLike[str]) -> pd.DataFrame:
    """Every claim outcome recorded under ``<results>/claims/`` (the last record of an id wins), one row each."""
    folder = Path(results) / "claims"
    rows = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a hard kill
                continue
    columns = [c for c in CLAIM_COLUMNS if c not in _PUBLISH_ONLY]
    if not rows:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame(rows).drop_duplicates("id", keep="last")
    return df.reindex(columns=columns).sort_values(["paper", "id"]).reset_index(drop=True)


def stability_table(runs: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """One row per claim over several seeds' outcomes (``{seed: collect_claims(...)}``): the verdict and estimate
    per seed, ``seeds_held`` of ``seeds`` and whether the verdict changed across seeds."""
    frames = [f.assign(seed=s) for s, f in runs.items() if len(f)]
    if not frames:
        return pd.DataFrame(columns=["paper", "id", "seeds_held", "seeds", "verdicts", "changes"])
    df = pd.concat(frames, ignore_index=True)
    rows = []
    for (paper, cid), g in df.groupby(["paper", "id"], sort=True):
        g = g.sort_values("seed")
        row = {"paper": paper, "id": cid, "seeds_held": int((g.verdict == "holds").sum()), "seeds": len(g),
               "verdicts": "; ".join(f"seed {s}: {v}" for s, v in zip(g.seed, g.verdict)),
               "changes": g.verdict.nunique() > 1}  # fmt: skip
        for s, e, lo, hi in zip(g.seed, g.estimate, g.low, g.high):
            row[f"seed {s}"] = f"{format_estimate(e)} [{format_estimate(lo)}, {format_estimate(hi)}]"
        rows.append(row)
    return pd.DataFrame(rows)


def format_estimate(v: Any) -> str:
    """An estimate as the claims' tables show it: three significant digits, ``nan`` for a missing one, ``""`` for
    text."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return ""
    return "nan" if not math.isfinite(v) else f"{v:.3g}"


def _flag(v: Any) -> bool:
    return str(v).strip().lower() in ("true", "1", "1.0")


def superseded(claims: pd.DataFrame) -> pd.Series:
    """True for the rows of ``claims`` whose rule another claim id replaced (``superseded_by`` set)."""
    if "superseded_by" not in claims:
        return pd.Series(False, index=claims.index)
    col = claims["superseded_by"]
    return col.notna() & col.astype(str).str.strip().ne("") & col.astype(str).str.lower().ne("nan")


def claim_kinds(claims: pd.DataFrame) -> pd.Series:
    """What each row of ``claims`` counts toward: ``"paper"`` (its paper's tally), ``"method"`` (another method's own
    paper), ``"own"`` (the benchmark's); None for an exploratory reading or a superseded rule (counted nowhere)."""
    group = claims["group"].astype(str) if "group" in claims else pd.Series("", index=claims.index)
    kind = pd.Series(np.where(claims["own"].map(_flag), "own", np.where(group.eq("method"), "method", "paper")),
                     index=claims.index, dtype=object)  # fmt: skip
    return kind.where(~claims["exploratory"].map(_flag) & ~superseded(claims), None)


def tally(claims: pd.DataFrame) -> pd.DataFrame:
    """Per paper: distinct paper claims per verdict (:data:`VERDICTS`), with the benchmark's own claims apart and
    exploratory readings and superseded rules left out; ``one run`` counts the claims decided on one run (fewer
    than three seeds: their verdict says nothing of another training seed)."""
    cols = ["paper", "kind", "claims", *VERDICTS, "one run"]
    if claims.empty:
        return pd.DataFrame(columns=cols)
    df = claims.assign(kind=claim_kinds(claims)).dropna(subset=["kind"])
    seeds = pd.to_numeric(df["seeds"], errors="coerce").fillna(1) if "seeds" in df else pd.Series(1, index=df.index)
    rows = []
    for (paper, kind), g in df.groupby(["paper", "kind"], sort=True):
        one = int(((seeds.loc[g.index] < 3) & g["verdict"].ne("untested")).sum())
        rows.append({"paper": paper, "kind": kind, "claims": len(g),
                     **{v: int((g["verdict"] == v).sum()) for v in VERDICTS}, "one run": one})  # fmt: skip
    return pd.DataFrame(rows, columns=cols)
