#!/usr/bin/env bash
# The one entry point on a GPU machine (no LLVM, no compiler, no network) with
# dist/ carried (tools/build.sh made it). Logs and reports go to $OUT.
#
#   tools/gpu.sh test [pytest options]   install the wheel; the Python tests, GPU tests
#                                        included, from outside the repository
#   tools/gpu.sh check [bench options]   test, then compute-sanitizer memcheck, racecheck
#                                        and synccheck on test/gpu/sanitize_{bwd,fwd}.py and the
#                                        probes, and a short benchmark; names what failed
#   tools/gpu.sh bench [bench options]   python3 -m sparse_mla.bench next to cuDNN-frontend
#                                        SM90 (its wheels unpacked into /tmp/peers-site by
#                                        ../shared/peers/install_on_gpu.sh)
#   tools/gpu.sh ab NAME=WHEEL ...       A/B of builds in one run: each wheel installed in
#                                        turn, the bench at $SHAPES (random pattern, more
#                                        options in $BENCH_ARGS); tables to stdout; then
#                                        $AB_RUN, a command run in bench/, if set
#   tools/gpu.sh profile [HEADS ...]     Nsight Compute sections and stall reasons of the main
#                                        kernel at S=4096 (default H 16 64; bench/profile_pass.py,
#                                        options in $PROFILE_ARGS; PASS=fwd: the forward's);
#                                        SOURCE=1 adds per-SASS stalls
#   tools/gpu.sh cp                      two or more GPUs: the NCCL context-parallel test
#                                        (issue 28) and one timed step of 2 x 8192 queries
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu}
mkdir -p "$out"

install() {   # the wheel of dist/, or the one given
  local wheel=${1:-$(ls "$root"/dist/sparse_mla-*.whl 2>/dev/null | head -1)}
  [ -n "$wheel" ] || { echo "gpu.sh: no wheel in dist/ (run tools/build.sh and carry dist)"; return 1; }
  python3 -m pip install -q --no-index --no-deps --force-reinstall "$wheel" 2>&1 | tee "$out/pip.log"
  return "${PIPESTATUS[0]}"
}

run_tests() {
  install || return 1
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$out/gpu.txt"
  (cd /tmp && python3 -c "import sparse_mla; print('sparse_mla', sparse_mla.__version__, \
'from', sparse_mla.__file__)") | tee "$out/installed.txt"
  (cd /tmp && SPARSE_MLA_USE_INSTALLED=1 PYTHONUNBUFFERED=1 \
    python3 -m pytest -v -rs -p no:cacheprovider "$root/test/python" "$@" 2>&1) \
    | tee "$out/pytest.log"
  return "${PIPESTATUS[0]}"
}

check() {
  local failed=() tool
  timeout 500 bash "$0" test -q || failed+=("pytest")
  for tool in memcheck racecheck synccheck; do
    for pass in bwd fwd; do
      (cd /tmp && timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
        python3 "$root/test/gpu/sanitize_$pass.py") > "$out/sanitizer-$tool-$pass.log" 2>&1 \
        || failed+=("compute-sanitizer $tool ($pass)")
      tail -3 "$out/sanitizer-$tool-$pass.log"
    done
    # The probes: mbarrier hand-overs between warpgroups and between the CTAs of
    # a cluster; layout conversions through shared scratch.
    (cd /tmp && SPARSE_MLA_TEST_KERNELS="$root/dist/test_kernels" SPARSE_MLA_USE_INSTALLED=1 \
      timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
      python3 -m pytest -q -p no:cacheprovider "$root/test/python/test_gpu_warp_specialize.py" \
        "$root/test/python/test_gpu_cluster.py" "$root/test/python/test_gpu_convert_layout.py") \
      > "$out/sanitizer-$tool-probes.log" 2>&1 || failed+=("compute-sanitizer $tool (probes)")
    tail -2 "$out/sanitizer-$tool-probes.log"
  done
  local bench=("$@")
  [ ${#bench[@]} -eq 0 ] && bench=(--shapes 2048x16,2048x64 --reps 5)
  (cd /tmp && timeout 300 python3 -m sparse_mla.bench --out "$out/bench" "${bench[@]}") \
    > "$out/bench.log" 2>&1 || failed+=("benchmark")
  tail -2 "$out/bench.log"
  if [ ${#failed[@]} -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    return 1
  fi
  echo "gpu.sh check: all steps passed"
}

bench() {
  local site=/tmp/peers-site
  cd /tmp && PYTHONPATH=$site:$site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1 \
    python3 -m sparse_mla.bench --out "$out/bench" "$@"
}

ab() {
  local arg name wheel dir file
  for arg in "$@"; do
    name=${arg%%=*} wheel=${arg#*=}
    dir=$(mktemp -d)
    # pip wants a wheel's own file name; the builds may be renamed copies:
    # name it from its dist-info (name-version) and WHEEL's tag.
    file=$(python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
info = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
tag = next(l[5:] for l in z.read(info).decode().splitlines() if l.startswith("Tag: "))
print(info.split(".dist-info")[0] + "-" + tag + ".whl")' "$wheel") \
      || { echo "== $name: $wheel is not a wheel"; continue; }
    cp "$wheel" "$dir/$file"
    install "$dir/$file" >/dev/null || { echo "== $name: install failed"; continue; }
    (cd /tmp && PYTHONUNBUFFERED=1 python3 -m sparse_mla.bench \
      --shapes "${SHAPES:-4096x64,16384x64,4096x16,16384x16}" --patterns random \
      ${BENCH_ARGS:-} --out "$dir/bench" > "$dir/bench.log" 2>&1)
    echo "== $name ($wheel)"
    grep -E '^\| ' "$dir/bench/bench.md" 2>/dev/null || tail -20 "$dir/bench.log"
    [ -z "${AB_RUN:-}" ] || (cd "$root/bench" && PYTHONUNBUFFERED=1 bash -c "$AB_RUN" 2>&1)
  done
}

profile() {
  local heads=("$@") h pass=${PASS:-bwd}
  [ ${#heads[@]} -eq 0 ] && heads=(16 64)
  cd /tmp || return 1
  for h in "${heads[@]}"; do
    timeout 200 ncu --kernel-name regex:sparse_mla_${pass}_d --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section LaunchStats --section Occupancy --section InstructionStats \
      --section ComputeWorkloadAnalysis \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:l1tex__t_requests_pipe_lsu_mem_global_op_red.*sum,regex:lts__t_sectors_op_red.*sum,smsp__inst_executed_op_global_red.sum" \
      python3 "$root/bench/profile_pass.py" --pass "$pass" --seq 4096 --heads "$h" \
      ${PROFILE_ARGS:-} > "$out/ncu-$pass-h$h.txt" 2>&1
    if [ "${SOURCE:-0}" = 1 ]; then
      timeout 200 ncu --kernel-name regex:sparse_mla_${pass}_d --launch-skip 1 --launch-count 1 \
        --section SourceCounters --section WarpStateStats -f -o "$out/src-$pass-h$h" \
        python3 "$root/bench/profile_pass.py" --pass "$pass" --seq 4096 --heads "$h" \
        ${PROFILE_ARGS:-} > /dev/null 2>&1
      ncu -i "$out/src-$pass-h$h.ncu-rep" --page source --csv --print-source sass \
        > "$out/ncu-$pass-h$h-source.csv" 2>&1
      rm -f "$out/src-$pass-h$h.ncu-rep"
    fi
    grep -E "Duration|Throughput|Issued Warp|stalled|_red|Registers|Pipe" "$out/ncu-$pass-h$h.txt" \
      | awk '$NF+0 > 0.05 || /Duration|Throughput|Issued/' | head -40
  done
}

cp_nccl() {
  local n h status
  n=$(nvidia-smi -L | wc -l)
  [ "$n" -ge 2 ] || { echo "gpu.sh cp: needs two GPUs, found $n"; return 1; }
  cd /tmp || return 1
  export SPARSE_MLA_USE_INSTALLED=1 PYTHONUNBUFFERED=1
  python3 -m pytest -v -p no:cacheprovider "$root/test/python/test_gpu_context_parallel.py" \
    2>&1 | tee "$out/cp-test.log"
  status=${PIPESTATUS[0]}
  for h in 16 64; do
    timeout 500 python3 "$root/examples/context_parallel.py" --backend nccl --world 2 \
      --tokens 16384 --heads $h --topk 2048 --time 2>&1 | tee -a "$out/cp-time.log"
  done
  return "$status"
}

command=${1:-}
shift || true
case "$command" in
  test) run_tests "$@" ;;
  check) check "$@" ;;
  bench) bench "$@" ;;
  ab) ab "$@" ;;
  profile) profile "$@" ;;
  cp) cp_nccl "$@" ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
