"""Importing numpy without OpenBLAS's worker threads spinning idle for a tenth of a second.

numpy's wheels link OpenBLAS, which starts its worker threads (one per core but one) when numpy
is imported. A worker that has nothing to do waits for work by spinning for ``2**28`` CPU cycles
(OpenBLAS's default ``THREAD_TIMEOUT`` of 28, about 0.1 s) before it sleeps, and it has nothing
to do at the import: on two cores, ``import numpy`` cost 0.15 s of CPU (whole process, median of
15) against 0.10 s with that wait shortened. The figures never call BLAS (their arrays are small
and element-wise), so that spinning is pure cost, paid by every command that draws figures.

`load_numpy` imports numpy with ``OPENBLAS_THREAD_TIMEOUT=4`` (OpenBLAS's smallest wait, ``2**4``
cycles: an idle worker sleeps at once and is woken when a BLAS call has work for it) and then
removes the variable again, so that child processes see the environment unchanged (OpenBLAS
reads it once, when it is loaded). BLAS still uses every core, and every result is the same;
only the threads' wake-up after an idle moment costs a few microseconds more than a spin.
Nothing is changed when numpy was imported before, or when the environment already sets
``OPENBLAS_THREAD_TIMEOUT`` or a number of OpenBLAS threads (the user's choice stands); numpy
built against another BLAS ignores the variable.
"""
from __future__ import annotations

import os
import sys
from types import ModuleType

TIMEOUT_VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
TIMEOUT_LOG2_CYCLES = "4"       # OpenBLAS clamps it to 4..30; its default is 28

# Variables by which a user chooses OpenBLAS's threads: then nothing is changed.
USER_CHOICES = (TIMEOUT_VARIABLE, "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def load_numpy() -> ModuleType:
    """Import numpy (see the module docstring) and return it."""
    if "numpy" in sys.modules or any(name in os.environ for name in USER_CHOICES):
        import numpy
        return numpy
    os.environ[TIMEOUT_VARIABLE] = TIMEOUT_LOG2_CYCLES
    try:
        import numpy
    finally:
        os.environ.pop(TIMEOUT_VARIABLE, None)
    return numpy


__all__ = ["load_numpy"]
