"""kernelsynth: generate Hugging Face datasets of verified GPU-kernel optimization cases.

Entry point: ``python -m kernelsynth task=flip2d hw=h200`` (see README.md).
"""

__version__ = "0.1.0"
