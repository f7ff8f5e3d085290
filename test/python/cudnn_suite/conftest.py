# What cuDNN-frontend's test tree gives the ported DSA backward test, at its
# minimum (README.md beside this file): its own folder on sys.path, so that
# "from test_utils import ..." and "from deepseek_sparse_attention.cutedsl...
# import ..." find the copies here, and the markers the test uses registered.
# test/python/conftest.py still puts the repository's bundle/ on sys.path.
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def pytest_configure(config):
    for marker in ("L0: cuDNN-frontend's tier-0 (pre-merge) tests",
                   "L1: cuDNN-frontend's tier-1 tests",
                   "L2: cuDNN-frontend's tier-2 (long) tests",
                   "gpu_exclusive: cuDNN-frontend: needs the GPU to itself",
                   "xdist_group(name): cuDNN-frontend: pytest-xdist scheduling group"):
        config.addinivalue_line("markers", marker)
