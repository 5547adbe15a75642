"""Backends: how a candidate's compiled kernels are inspected (Triton today)."""
