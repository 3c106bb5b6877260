"""The experiments wing: one module (or small package) per notebook.

Each holds what is specific to one notebook -- its setups, cache keys, tables and the paper's constants -- on top
of the library wing (``helpers.data``, ``helpers.models``, ``helpers.training``, ``helpers.estimators``, ...).

=================  ======================================  =========================================
module             notebook                                paper
=================  ======================================  =========================================
``p1_bounds``      ``01_discriminator_bounds``             1: correctness-discriminator bounds
``p2_selective``   ``02_selective_answering``              2: AUC failure modes, DiSCA / DiDMA / NiDMA
``p3_selftraining`` ``03_self_training``                   3: self-training ensembles
``p4_attribution`` ``04_attribution_ranking``              4: attribution factors for OOD ranking
``p5_mde``         ``05_mde``                              5: Meta-Distribution Energy
``p6_benchmark``   ``06_benchmark``                        all: every estimator head to head
=================  ======================================  =========================================

The import rule (checked by ``tests/test_architecture.py``): only notebooks, tests, scripts and other
experiment modules import from here; nothing in the library wing does.
"""
