"""helpers: label-free performance prediction toolkit (estimators, data, training, runner).

Submodules are imported lazily by the caller (``import helpers.estimators``) so that
``import helpers`` stays cheap and does not pull in torch.
"""

__version__ = "0.1.0"
