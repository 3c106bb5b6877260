"""From records to what a reader sees: the records a notebook writes (:mod:`~helpers.run.results`), the
summary tables (:mod:`~helpers.publish.summary`), the reports' generated blocks and published notebooks
(:mod:`~helpers.publish.reports`), and ``python -m helpers publish`` / ``seeds --publish``
(:mod:`~helpers.publish.publishing`)."""

from helpers.publish.publishing import publish, render_published, seed_runs, seeds_stability

__all__ = ["publish", "render_published", "seed_runs", "seeds_stability"]
