#!/usr/bin/env python3
"""Mutation fuzzer of sparse-mla-opt: every input must end in exit status 0
(compiled) or 1 with a located diagnostic, never a signal, an assertion, an
LLVM ERROR, another status or a hang.

Seeds are the kernels of kernels/ and the lit inputs of test/ (split at
`// -----`). Each case mutates a seed a few times (numbers, including zero,
negative and huge sizes; types; lines deleted, duplicated or swapped; SSA
names and attributes exchanged; the text cut short) and runs it in one mode:
each pass of the pipeline alone, on input it may not expect, or the whole
sparse-mla-to-ptx pipeline (lines of other inputs are mixed in too). A crash is minimized (whole lines, then
characters) while it crashes the same way, and saved with its command.

  python3 tools/fuzz_opt.py --seconds 60                 # the test suite's run
  python3 tools/fuzz_opt.py --seconds 1200 --out fuzz/   # a long one

Prints the cases run per mode and each distinct crash; exits 1 if any.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = {
    "specialize": ["--tile-specialize"],
    "schedule": ["--pass-pipeline=builtin.module(tile.kernel(tile-schedule{registers=232,280 "
                 "partition-rows=0,128 partition-cols=0,64}))"],
    "split-partitions": ["--pass-pipeline=builtin.module(tile.kernel(tile-split-partitions))"],
    "ablate": ["--pass-pipeline=builtin.module(tile.kernel(tile-ablate{idle-gathers "
               "idle-scatters=1 drop-scatters=0}))"],
    "lower-channels": ["--pass-pipeline=builtin.module(tile.kernel(tile-lower-channels{stages=2}))"],
    "split-d": ["--pass-pipeline=builtin.module(tile.kernel(tile-split-d))"],
    "stage-scatters": ["--pass-pipeline=builtin.module(tile.kernel(tile-stage-scatters))"],
    "expand-key-clocks": ["--pass-pipeline=builtin.module(tile.kernel(tile-expand-key-clocks))"],
    "pipeline-loops": ["--pass-pipeline=builtin.module(tile.kernel(tile-pipeline-loops))"],
    "assign-layouts": ["--pass-pipeline=builtin.module(tile.kernel(tile-assign-layouts))"],
    "allocate-shared": ["--pass-pipeline=builtin.module(tile.kernel(tile-allocate-shared))"],
    "materialize-waits": ["--pass-pipeline=builtin.module(tile.kernel(tile-materialize-waits))"],
    "group-gemms": ["--pass-pipeline=builtin.module(tile.kernel(tile-group-gemms))"],
    "assign-barrier-ids": ["--pass-pipeline=builtin.module(tile.kernel(tile-assign-barrier-ids))"],
    "record-manifest": ["--tile-record-manifest"],
    "convert": ["--convert-tile-to-nvvm"],
    "prepared-convert": ["--pass-pipeline=builtin.module(tile-specialize,tile.kernel("
                         "tile-split-d,tile-stage-scatters,tile-expand-key-clocks,"
                         "tile-pipeline-loops,"
                         "tile-assign-layouts,tile-allocate-shared,tile-materialize-waits,"
                         "tile-group-gemms,tile-assign-barrier-ids),tile-record-manifest,"
                         "convert-tile-to-nvvm)"],
    "pipeline": ["--sparse-mla-to-ptx"],
}
TIMEOUT_S = 20
MEMORY_BYTES = 4 << 30
CRASH_MARKS = ("LLVM ERROR", "Assertion", "PLEASE submit a bug report", "Stack dump",
               "UNREACHABLE", "terminate called")
NUMBERS = ["0", "1", "-1", "2", "3", "7", "8", "16", "63", "64", "65", "128", "1000",
           "4096", "65536", "2147483647", "2147483648", "4294967296", "9223372036854775807",
           "99999999999999999999"]
TYPES = ["f32", "bf16", "f16", "i32", "i1", "i8", "i64", "index", "f64"]


def seeds():
    out = []
    files = sorted((ROOT / "kernels").glob("*.mlir")) + sorted((ROOT / "test").rglob("*.mlir"))
    for f in files:
        for part in f.read_text().split("\n// -----"):
            # RUN lines are the lit harness's, not the input's.
            text = "\n".join(l for l in part.splitlines() if "RUN:" not in l)
            if "tile." in text:
                out.append((f.relative_to(ROOT).as_posix(), text))
    return out


def mutate(text, rng, corpus):
    lines = text.splitlines()
    kind = rng.randrange(10)
    if kind == 0:  # a number
        spots = [m for m in re.finditer(r"(?<![\w%#])-?\d+(?![\w.])", text)]
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
    elif kind == 1:  # a tile dimension
        spots = list(re.finditer(r"(?<=[<x])(\d+|\{\w+\})(?=x)", text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(NUMBERS[:16] + ["{n}", "{hw}", "?"]) + text[m.end():]
    elif kind == 2:  # a type (not a dense array's: MLIR 22's parser aborts on
        # `array<index: ...>` in any op, an upstream bug)
        spots = list(re.finditer(r"(?<!array<)\b(" + "|".join(TYPES) + r")\b", text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(TYPES) + text[m.end():]
    elif kind == 3 and lines:  # a line deleted
        del lines[rng.randrange(len(lines))]
    elif kind == 4 and lines:  # a line duplicated
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 5 and len(lines) > 1:  # two lines swapped
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 6:  # an SSA name for another
        names = sorted(set(re.findall(r"%[\w.]+", text)))
        if len(names) > 1:
            a, b = rng.sample(names, 2)
            spots = [m.start() for m in re.finditer(re.escape(a) + r"\b", text)]
            if spots:
                s = rng.choice(spots)
                return text[:s] + b + text[s + len(a):]
    elif kind == 7:  # an attribute or keyword dropped or exchanged
        words = ["{transpose}", "{transpose_a}", "{transpose_b}", "{per_warpgroup}",
                 "stages(1)", "stages(2)", "stages(4)", "warpgroups(1)", "warpgroups(2)",
                 "warpgroups(4)", "along 0", "along 1", "pad", "bounds", "staging",
                 "variants([])", "variants([{hw = 16}])", "add", "max", "or", "x", "y",
                 "cluster(1)", "cluster(2)", "cluster(8)", "cta", "on", "#tile.mma"]
        spots = [m for w in words for m in re.finditer(re.escape(w), text)]
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(words + [""]) + text[m.end():]
    elif kind == 8:  # cut short
        return text[:rng.randrange(len(text) + 1)]
    elif kind == 9 and lines:  # a line of another input
        other = rng.choice(corpus)[1].splitlines()
        if other:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(other))
    return "\n".join(lines)


def run(mode, text, workdir):
    """(outcome, signature): outcome 'ok' or 'crash'; the signature tells
    crashes apart."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", dir=workdir, delete=False) as f:
        f.write(text)
        path = f.name
    # A copy of the compiler (a rebuild may replace the original meanwhile),
    # with memory capped: eating memory is a failure too.
    cmd = ["prlimit", f"--as={MEMORY_BYTES}", "--core=0", str(Path(workdir) / "sparse-mla-opt"),
           path, *MODES[mode], "-o", os.devnull]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return "crash", "hang"
    finally:
        os.unlink(path)
    err = p.stderr
    mark = next((m for m in CRASH_MARKS if m in err), None)
    if p.returncode in (0, 1) and not mark:
        if p.returncode == 1 and "error:" not in err:
            return "crash", "status 1 without a diagnostic"
        return "ok", ""
    first = next((l for l in err.splitlines()
                  if any(m in l for m in CRASH_MARKS[:2] + CRASH_MARKS[4:])), "")
    # The innermost frame of our code, without addresses (they move).
    frames = [m.group(1) for m in re.finditer(r"#\d+ 0x[0-9a-f]+ (.*?) \(/", err)]
    frame = next((f for f in frames if "sparse_mla" in f), frames[0] if frames else "")
    return "crash", f"status {p.returncode}: {first[:100]} {frame[:160]}".strip()


def minimize(mode, text, signature, workdir):
    """Smaller input that still crashes with `signature`: chunks of lines,
    then single characters at the ends of lines."""
    def same(t):
        return run(mode, t, workdir) == ("crash", signature)

    lines = text.splitlines()
    n = max(1, len(lines) // 2)
    while n >= 1:
        i, changed = 0, False
        while i < len(lines):
            trial = lines[:i] + lines[i + n:]
            if trial and same("\n".join(trial)):
                lines, changed = trial, True
            else:
                i += n
        if not changed:
            n //= 2
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=None, help="folder for the minimized crashes")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    corpus = seeds()
    modes = a.modes.split(",")
    counts = {m: 0 for m in modes}
    crashes = {}
    deadline = time.time() + a.seconds
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        shutil.copy2(ROOT / "build/bin/sparse-mla-opt", Path(workdir) / "sparse-mla-opt")
        def case():
            name, text = rng.choice(corpus)
            for _ in range(rng.choice([1, 1, 2, 3])):
                text = mutate(text, rng, corpus)
            mode = rng.choice(modes)
            return name, mode, text

        pending = set()
        while time.time() < deadline or pending:
            while time.time() < deadline and len(pending) < 2 * a.jobs:
                name, mode, text = case()
                fut = pool.submit(run, mode, text, workdir)
                fut.meta = (name, mode, text)
                pending.add(fut)
            done, pending = concurrent.futures.wait(
                pending, timeout=1, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                name, mode, text = fut.meta
                counts[mode] += 1
                outcome, signature = fut.result()
                if outcome == "crash" and (mode, signature) not in crashes:
                    small = minimize(mode, text, signature, workdir)
                    crashes[(mode, signature)] = (name, small)
                    print(f"CRASH [{mode}] {signature}\n  from {name}; reproducer:\n"
                          + "".join("    " + l + "\n" for l in small.splitlines()), flush=True)
    print(f"fuzz_opt: seed {seed}, {sum(counts.values())} cases in {a.seconds:.0f} s: "
          + ", ".join(f"{m} {n}" for m, n in counts.items()))
    if a.out and crashes:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        for i, ((mode, signature), (name, small)) in enumerate(sorted(crashes.items())):
            (out / f"crash{i}.mlir").write_text(
                f"// sparse-mla-opt {' '.join(MODES[mode])}\n// {signature}\n// from {name}\n"
                + small)
    print(f"fuzz_opt: {len(crashes)} distinct crashes" if crashes else "fuzz_opt: no crash")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
