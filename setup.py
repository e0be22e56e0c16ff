#!/usr/bin/env python3
from pathlib import Path
from setuptools import setup, find_packages

readme = Path(__file__).parent / "README.md"

setup(
  name="teeny",
  version="0.1.0",
  description="A lazy tensor framework in the tinygrad family: one UOp IR, graph rewrites, generated kernels.",
  long_description=readme.read_text() if readme.exists() else "",
  long_description_content_type="text/markdown",
  packages=find_packages(include=["teeny", "teeny.*"]),
  python_requires=">=3.10",
  install_requires=["numpy"],
  extras_require={
    # torch is pinned exactly: a CPU build of 2.13.0 sits in the local pip cache; any other version pulls a CUDA build
    "testing": ["pytest", "pytest-xdist", "hypothesis", "torch==2.13.0", "safetensors", "ruff", "mypy"],
    "examples": ["scikit-learn", "tqdm"],
    "cuda": ["cuda-python", "nvidia-cuda-nvrtc"],
    "cl": ["pyopencl", "pocl-binary-distribution"],
  },
  classifiers=["Programming Language :: Python :: 3"],
)
