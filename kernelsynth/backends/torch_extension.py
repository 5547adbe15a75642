"""The ``torch_extension`` backend: a Python file whose ``ModelNew`` compiles CUDA C++ with
``torch.utils.cpp_extension.load_inline`` (KernelBench style). Needs a GPU; its Python source is
screened. The worker points ``TORCH_EXTENSIONS_DIR`` at ``<cache_dir>/torch_extensions`` so
builds are cached, and the compile statistics of its kernels come from ``cuobjdump``
(:func:`kernelsynth.backends.cuda.extension_stats`, which every Python backend reports)."""

from __future__ import annotations

from . import Backend


class TorchExtensionBackend(Backend):
    name = "torch_extension"
    needs_gpu = True


BACKEND = TorchExtensionBackend()
