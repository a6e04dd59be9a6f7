"""Numba kernels: ``@njit(cache=True)``, NumPy arrays and scalars in and out, nothing else."""
