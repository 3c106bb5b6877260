"""Running the notebooks: profiles (:mod:`~helpers.run.profiles`), notebook parameters
(:mod:`~helpers.run.notebook_params`), the dependency graph (:mod:`~helpers.run.graph`) and the runner behind
``python -m helpers run`` (:mod:`~helpers.run.runner`).  Imports nothing itself, so that a notebook's
``from helpers.run.notebook_params import ...`` loads only what it names."""
