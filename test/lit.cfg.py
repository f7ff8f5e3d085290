# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "SPARSE_MLA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sparse_mla_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Runtime", "python", "Inputs"]
config.substitutions.append(("%kernels", os.path.join(config.sparse_mla_src_root, "kernels")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["sparse-mla-opt"], [config.sparse_mla_tools_dir])

# Tests that assemble PTX need ptxas (CUDA toolkit), not a GPU.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    llvm_config.with_environment("PATH", os.path.dirname(ptxas), append_path=True)
