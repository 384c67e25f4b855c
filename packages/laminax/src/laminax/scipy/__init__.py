"""`laminax.scipy`: SciPy-style functions (`special`, `stats`, ...)."""

from laminax.scipy import cluster as cluster
from laminax.scipy import fft as fft
from laminax.scipy import integrate as integrate
from laminax.scipy import interpolate as interpolate
from laminax.scipy import linalg as linalg
from laminax.scipy import ndimage as ndimage
from laminax.scipy import optimize as optimize
from laminax.scipy import signal as signal
from laminax.scipy import sparse as sparse
from laminax.scipy import special as special
from laminax.scipy import stats as stats

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse", "special", "stats"]
