#!/usr/bin/env bash
# On the GPU machine: A/B timing of several builds of the wheel in one run
# (ours only, random pattern): each wheel in turn is installed and
# `python3 -m sparse_mla.bench` run at the given shapes; the markdown tables
# go to stdout. Ratios between builds are only meaningful within one run.
# usage: SHAPES=4096x64,16384x16 tools/gpu_ab.sh NAME=WHEEL [NAME=WHEEL ...]
# (BENCH_ARGS: more options of sparse_mla.bench, e.g. "--d-tail 0")
set -u
shapes=${SHAPES:-4096x64,16384x64,4096x16,16384x16}
for arg in "$@"; do
  name=${arg%%=*} wheel=${arg#*=}
  dir=$(mktemp -d)
  # pip wants a wheel's own file name; the builds may be renamed copies.
  cp "$wheel" "$dir/sparse_mla-0.2.0+g0-py3-none-manylinux_2_24_x86_64.whl"
  python3 -m pip install -q --no-index --no-deps --force-reinstall "$dir"/*.whl >/dev/null 2>&1 \
    || { echo "== $name: install failed"; continue; }
  (cd /tmp && PYTHONUNBUFFERED=1 python3 -m sparse_mla.bench --shapes "$shapes" --patterns random \
    ${BENCH_ARGS:-} --out "$dir/bench" > "$dir/bench.log" 2>&1)
  echo "== $name ($wheel)"
  grep -E '^\| ' "$dir/bench/bench.md" 2>/dev/null || tail -20 "$dir/bench.log"
done
