"""sparse-mla: the DeepSeek-Sparse-Attention sparse-MLA forward and backward
for Hopper.

The kernels are compiled ahead of time by ``sparse-mla-opt`` from the tile
dialect sources in ``kernels/`` and loaded here through the runtime library.
"""
try:  # written by tools/build_kernels.sh into the bundle and the wheel
    from ._version import __commit__, __version__
except ImportError:  # the source tree itself
    __version__, __commit__ = "unknown", "unknown"

from ._runtime import KernelError, kernels_dir, load_manifest
from .attention import SparseMLA, sparse_mla
from .bwd import sparse_mla_bwd, workspace_bytes
from .fwd import sparse_mla_fwd, sparse_mla_kl_target
from .ops import postprocess, preprocess

__all__ = ["KernelError", "SparseMLA", "__commit__", "__version__", "kernels_dir",
           "load_manifest", "preprocess", "postprocess", "sparse_mla", "sparse_mla_bwd",
           "sparse_mla_fwd", "sparse_mla_kl_target", "workspace_bytes"]
