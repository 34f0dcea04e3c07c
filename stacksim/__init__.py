"""The ``stacksim`` command line (:mod:`stacksim.cli`).

A simulation is single-threaded; sweeps run one process per core. The thread pools of numpy's
linear-algebra libraries (OpenBLAS, MKL, OpenMP) would only start threads that spin beside the
simulation and steal the other workers' cores (the 840-run study grid on 2 cores: 5.3 -> 4.9 min
with one thread each), so the command line asks for one thread each, unless the environment already
says otherwise. Set here, before anything imports numpy.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
