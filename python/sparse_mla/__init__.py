"""sparse-mla: the DeepSeek-Sparse-Attention sparse-MLA backward for Hopper.

The kernels are compiled ahead of time by ``sparse-mla-opt`` from the tile
dialect sources in ``kernels/`` and loaded here through the runtime library.
"""
from ._runtime import KernelError, kernels_dir, load_manifest
from .bwd import SparseMLA, sparse_mla_bwd
from .ops import postprocess, preprocess

__all__ = ["KernelError", "SparseMLA", "kernels_dir", "load_manifest", "preprocess",
           "postprocess", "sparse_mla_bwd"]
