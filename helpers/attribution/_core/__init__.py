"""Internals of :func:`helpers.attribution.attribute` (Captum's ``_core`` layout): one small module per method,
each exposing ``attribute(runner, encs, targets, options) -> (scores, deltas)``, and the batched model runner they
share (:mod:`.runner`)."""
