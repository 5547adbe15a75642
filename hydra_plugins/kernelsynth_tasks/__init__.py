"""Hydra plugin of kernelsynth: the ``task`` config group, generated from the task folders."""
