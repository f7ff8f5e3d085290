import os
import sys
from pathlib import Path

bundle = os.environ.get("SPARSE_MLA_BUNDLE", str(Path(__file__).resolve().parents[2] / "bundle"))
if bundle not in sys.path:
    sys.path.insert(0, bundle)
