#!/usr/bin/env python3
"""Writes the shape variants of kernels/sparse_mla_bwd.mlir.

The kernel's shape-dependent parts are its type aliases (between the
`// variant begin` and `// variant end` lines) and the lines marked
`// variant: ...`; everything else is shared. A variant is (heads per CTA,
D, D_tail); its kernel is named sparse_mla_bwd_h{heads}_d{D}_t{D_tail}.

usage: specialize_bwd.py KERNEL OUTDIR [HEADS,D,D_TAIL ...]
"""
import re
import sys
from pathlib import Path

# The variants the Python package selects from (python/sparse_mla/bwd.py).
# 64 heads per CTA keeps 144 dQ accumulator registers per thread and sits at
# ptxas's 255-register limit (D_tail = 64 spills a few bytes outside the main
# loop; see the manifests).
VARIANTS = [(32, 512, 64), (32, 512, 0), (64, 512, 64), (64, 512, 0)]


def aliases(hp, d, dt):
    hw, dqk = hp // 2, d + dt
    return f"""!kv_block = !tile.smem<64x{dqk}xbf16>
!v_block = !tile.smem<64x{d}xbf16>
!q_heads = !tile.smem<{hp}x{dqk}xbf16>
!do_heads = !tile.smem<{hp}x{d}xbf16>
!q_wg = !tile.smem<{hw}x{dqk}xbf16>
!do_wg = !tile.smem<{hw}x{d}xbf16>
!probs_both = !tile.smem<2x64x{hw}xbf16>
!probs = !tile.smem<64x{hw}xbf16>
!scores = !tile.reg<64x{hw}xf32>
!slot_mask = !tile.reg<64x{hw}xi32>
!head_vec = !tile.reg<{hw}xf32>
!dkv_rows = !tile.reg<64x{dqk}xf32>
!dkv_v_rows = !tile.reg<64x{d}xf32>
!dq_acc = !tile.reg<{dqk}x{hw}xf32>
!dq_out = !tile.reg<{dqk}x{hw}xbf16>
"""


def specialize(text, hp, d, dt):
    if hp % 16 or hp > 64 or d % 64 or dt % 64:
        raise ValueError(f"unsupported variant {(hp, d, dt)}")
    begin, end = text.index("// variant begin\n"), text.index("// variant end\n")
    text = text[:begin] + "// variant begin\n" + aliases(hp, d, dt) + text[end:]
    # Two stages of gathered rows fit in shared memory below 64 heads.
    stages = 2 if hp <= 32 else 1
    subst = {
        "heads per CTA": (r"arith.constant \d+ : index", f"arith.constant {hp} : index"),
        "heads per warpgroup": (r"arith.constant \d+ : index", f"arith.constant {hp // 2} : index"),
        "stages": (r"stages\(\d\)", f"stages({stages})"),
    }
    out = []
    for line in text.splitlines(keepends=True):
        m = re.search(r"// variant: (.*)$", line)
        if m:
            pattern, repl = subst[m.group(1).strip()]
            line, n = re.subn(pattern, repl, line)
            assert n == 1, line
        out.append(line)
    text = "".join(out)
    return text.replace("@sparse_mla_bwd(", f"@sparse_mla_bwd_h{hp}_d{d}_t{dt}(", 1)


def main():
    kernel, outdir = Path(sys.argv[1]), Path(sys.argv[2])
    variants = [tuple(map(int, v.split(","))) for v in sys.argv[3:]] or VARIANTS
    outdir.mkdir(parents=True, exist_ok=True)
    text = kernel.read_text()
    for hp, d, dt in variants:
        path = outdir / f"sparse_mla_bwd_h{hp}_d{d}_t{dt}.mlir"
        path.write_text(specialize(text, hp, d, dt))
        print(path)


if __name__ == "__main__":
    main()
