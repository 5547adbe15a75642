"""Importers: turn problems written in other formats into kernelsynth task folders.

- :mod:`kernelsynth.importers.kernelbench`: KernelBench's single-file problems
  (``kernelsynth-tools import-kernelbench``); :mod:`kernelsynth.importers.kbsource` is the part an
  imported reference.py calls at run time (re-executing the original source at a shape).
"""
