#!/usr/bin/env python3
"""Builds wheels of the backward with parts of its work taken out, to time
what each part costs inside the whole kernel (tools/gpu.sh ab runs them side
by side with the shipped wheel). The outputs of an ablated kernel are wrong:
these wheels are for timing only.

  python3 bench/ablate.py [NAME ...]     (after tools/build.sh)

Each NAME's wheel goes to dist-ablate/NAME/. The ablations:
  no-dkv-traffic  warpgroup 1's dKV reductions are all predicated off (their
                  rows are -1 behind a flag the compiler cannot see through):
                  every instruction stays, no byte reaches L2
  no-dkv          warpgroup 1 computes no dKV: no products, no reductions
  no-gather       every kv row of the gather is -1: cp.async zero-fills
                  shared memory and reads nothing
  no-overlap      the kernel as shipped, compiled without tile-split-d's
                  overlapped dKV pieces (split-d-overlap=0): outputs exact
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "kernels" / "sparse_mla_bwd.mlir"


def _rows_off(text, anchor):
    """`text` with `%rows_off`, the block's row indices all -1 at run time
    behind a flag the compiler cannot see through (causal is 0 or 1, never
    12345), defined just before `anchor`, so the ops that take it stay."""
    text = _replace(text, "  %zero_i32 = arith.constant 0 : i32\n",
                    "  %zero_i32 = arith.constant 0 : i32\n"
                    "  %never_flag = arith.constant 12345 : i32\n"
                    "  %never = arith.cmpi eq, %causal, %never_flag : i32\n")
    return _replace(text, anchor,
                    "        %rows_off = tile.map %rows : !slots -> !slots {\n"
                    "        ^bb0(%r: i32):\n"
                    "          %x = arith.select %never, %r, %none : i32\n"
                    "          tile.yield %x : i32\n"
                    "        }\n" + anchor)


def no_dkv_traffic(text):
    text = _rows_off(text, "        %ds_q = tile.gemm")
    return _replace(text, "%dkv[%rows, %c128]", "%dkv[%rows_off, %c128]", count=2)


def no_dkv(text):
    start = text.index("        // Warpgroup 1: dKV rows += dS^T Q")
    end = text.index("        tile.get_exit %pds_ch", start)
    return text[:start] + text[end:]


def no_gather(text):
    text = _rows_off(text, "        %gathered = tile.gather_rows")
    return _replace(text, "tile.gather_rows %kv[%rows, %c0]", "tile.gather_rows %kv[%rows_off, %c0]")


# name -> (kernel text -> ablated text, options of sparse-mla-to-ptx)
ABLATIONS = {"no-dkv-traffic": (no_dkv_traffic, ""), "no-dkv": (no_dkv, ""),
             "no-gather": (no_gather, ""),
             "no-overlap": (lambda text: text, " split-d-overlap=0")}


def _replace(text, old, new, count=1):
    if text.count(old) != count:
        sys.exit(f"ablate.py: expected {count} of {old!r} in {KERNEL.name}: the kernel changed")
    return text.replace(old, new)


def build(name):
    transform, options = ABLATIONS[name]
    text = transform(KERNEL.read_text())
    out = ROOT / "dist-ablate" / name
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "sparse_mla"
        shutil.copytree(ROOT / "bundle" / "sparse_mla", bundle)
        src = Path(tmp) / "sparse_mla_bwd.mlir"
        src.write_text(text)
        subprocess.run([str(ROOT / "build" / "bin" / "sparse-mla-opt"), str(src),
                        f"--sparse-mla-to-ptx=output={bundle}/kernels/sparse_mla_bwd{options}",
                        "-o", "/dev/null"], check=True)
        subprocess.run([sys.executable, str(ROOT / "tools" / "build_wheel.py"), str(bundle),
                        str(out), f"ablate-{name}"], check=True)


if __name__ == "__main__":
    names = sys.argv[1:] or list(ABLATIONS)
    for n in names:
        if n not in ABLATIONS:
            sys.exit(f"ablate.py: unknown ablation {n!r} (known: {', '.join(ABLATIONS)})")
        build(n)
