#!/usr/bin/env python3
"""Builds wheels of the backward compiled with other options: parts of its
work taken out (tile-ablate), to time what each part costs inside the whole
kernel, or another schedule (tile-schedule, tile-split-d). tools/gpu.sh ab,
or bench/interleave.py on the wheels' kernels, times them side by side with
the shipped build. The kernel text is never edited.

  python3 bench/ablate.py [NAME ...]     (after tools/build.sh)
  python3 bench/ablate.py NAME=OPTIONS   (any options of sparse-mla-bench-to-ptx)

Each NAME's wheel goes to dist-ablate/NAME/. Ablations (timing only, the
outputs are wrong):
  no-dkv-traffic    warpgroup 1's dKV reductions idle: every instruction stays,
                    no byte reaches L2
  no-dkv            warpgroup 1 computes no dKV: no products, no reductions
  no-gather         the kv gather idles: cp.async zero-fills shared memory and
                    reads nothing
Schedules (outputs exact):
  no-overlap        tile-split-d's pieces not overlapped
  wg0-one-piece     warpgroup 0 adds dKV columns [0, 64) (shipped: [0, 128))
  wg0-three-pieces  warpgroup 0 adds dKV columns [0, 192)
  dq-rows-192       warpgroup 0 holds dQ^T rows [0, 192) (shipped: [0, 256))
  channel-stages-2  each channel takes two stages where shared memory allows
  staged-scatters   dKV reductions through shared memory and the TMA
                    (tile-stage-scatters) where room allows
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "kernels" / "sparse_mla_bwd.mlir"

# name -> options of sparse-mla-bench-to-ptx (Pipeline.h)
ABLATIONS = {
    "no-dkv-traffic": "idle-scatters=1",
    "no-dkv": "drop-scatters=1",
    "no-gather": "idle-gathers=1",
    "no-overlap": "split-d-overlap=0",
    "wg0-one-piece": "partition-cols=0,64",
    "wg0-three-pieces": "partition-cols=0,192",
    "dq-rows-192": "partition-rows=0,192",
    "channel-stages-2": "channel-stages=2",
    "staged-scatters": "stage-scatters=1",
}


def build(name, options):
    out = ROOT / "dist-ablate" / name
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "sparse_mla"
        shutil.copytree(ROOT / "bundle" / "sparse_mla", bundle)
        subprocess.run([str(ROOT / "build" / "bin" / "sparse-mla-opt"), str(KERNEL),
                        f"--sparse-mla-bench-to-ptx=output={bundle}/kernels/sparse_mla_bwd {options}",
                        "-o", "/dev/null"], check=True)
        subprocess.run([sys.executable, str(ROOT / "tools" / "build_wheel.py"), str(bundle),
                        str(out), f"ablate-{name}"], check=True)


if __name__ == "__main__":
    for arg in sys.argv[1:] or list(ABLATIONS):
        name, _, options = arg.partition("=")
        if not options and name not in ABLATIONS:
            sys.exit(f"ablate.py: unknown ablation {name!r} (known: {', '.join(ABLATIONS)}; "
                     f"or NAME=OPTIONS)")
        build(name, options or ABLATIONS[name])
