# The tests run against the bundle of tools/build.sh (PYTHONPATH or the
# repository's bundle/), or, with SPARSE_MLA_USE_INSTALLED=1, against the
# installed package (the wheel).
import os
import sys
from pathlib import Path

import pytest

if not os.environ.get("SPARSE_MLA_USE_INSTALLED"):
    bundle = os.environ.get("SPARSE_MLA_BUNDLE",
                            str(Path(__file__).resolve().parents[2] / "bundle"))
    if bundle not in sys.path:
        sys.path.insert(0, bundle)


@pytest.fixture(scope="session")
def probes():
    """Where tools/build.sh puts the GPU tests' probe kernels (test/gpu),
    or SPARSE_MLA_TEST_KERNELS."""
    return Path(os.environ.get("SPARSE_MLA_TEST_KERNELS",
                               Path(__file__).resolve().parents[2] / "dist" / "test_kernels"))


@pytest.fixture
def counting(probes, monkeypatch):
    """The kernels of the build whose backward counts the blocks each CTA
    computes (tools/build.sh: test_kernels/counting), for this test: its
    calls' stats get "blocks"."""
    monkeypatch.setenv("SPARSE_MLA_KERNELS", str(probes / "counting"))
