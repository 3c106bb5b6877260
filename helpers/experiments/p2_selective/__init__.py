"""Notebook 02 (paper 2, selective answering): the ten-model IMDb sentiment suite (:mod:`.suite`) and the
tables of AUC failure cases and rankings by accuracy, AUC and DiSCA (:mod:`.report`)."""
