"""Notebook 06 (all papers head to head): the shift-task producers of each family (:mod:`.producers`: CIFAR-10
ResNets, digits <-> USPS, text), the self-training block (:mod:`.selftrain`) and the seq2seq block
(:mod:`.seq2seq_block`).  They call the setups of notebooks 01, 03 and 05 (:mod:`helpers.experiments.p1_bounds`,
:mod:`~helpers.experiments.p3_selftraining`, :mod:`~helpers.experiments.p5_mde`) rather than copying them, so the
benchmark reads those notebooks' caches."""
