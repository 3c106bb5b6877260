"""helpers: label-free performance prediction toolkit (estimators, data, training, runner).

Submodules are imported lazily by the caller (``import helpers.estimators``) so that
``import helpers`` stays cheap and does not pull in torch.
"""

import os as _os

__version__ = "0.1.0"

# Nothing leaves the machine: NannyML (the CBPE peer, ``pip install -e .[peers]``) sends usage telemetry unless this
# is set before it is imported; a user's own setting wins.
_os.environ.setdefault("NML_DISABLE_USAGE_LOGGING", "1")
# transformers (5.x, with its `kernels` dependency) swaps layers for kernels fetched from the Hugging Face hub unless
# this is off: MiniLM then computes with transformers' own layers, the same on every version, and asks no server.
_os.environ.setdefault("USE_HUB_KERNELS", "0")
