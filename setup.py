"""Packaging hook: conf/ and specs/ stay at the repository root (where users and the docs find
them) and ship inside the wheel as kernelsynth/conf and kernelsynth/specs, where
kernelsynth/paths.py looks first. Everything else is in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        for name in ("conf", "specs"):
            dst = Path(self.build_lib) / "kernelsynth" / name
            if dst.exists():
                shutil.rmtree(dst)
            shutil.copytree(name, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithData})
