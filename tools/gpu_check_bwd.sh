#!/usr/bin/env bash
# On the GPU machine with dist/ carried: the GPU tests against the installed
# wheel (tools/gpu_run.sh), compute-sanitizer memcheck, racecheck and
# synccheck on small backwards (per token and in token tiles:
# test/gpu/sanitize_bwd.py) and on the warp-specialize, cluster and
# layout-conversion probes, and a short benchmark (python3 -m
# sparse_mla.bench; its options can be given here). Logs go to $OUT. Exits
# non-zero, naming the steps that failed, if any step fails.
# usage: tools/gpu_check_bwd.sh [bench options]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu_run}
mkdir -p "$out"
failed=()
timeout 500 bash "$root/tools/gpu_run.sh" -q || failed+=("pytest")
for tool in memcheck racecheck synccheck; do
  (cd /tmp && timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
    python3 "$root/test/gpu/sanitize_bwd.py") > "$out/sanitizer-$tool.log" 2>&1 \
    || failed+=("compute-sanitizer $tool")
  tail -3 "$out/sanitizer-$tool.log"
  # The probes: mbarrier hand-overs between warpgroups and between the CTAs of a
  # cluster; layout conversions through shared scratch.
  (cd /tmp && SPARSE_MLA_TEST_KERNELS="$root/dist/test_kernels" SPARSE_MLA_USE_INSTALLED=1 \
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
    python3 -m pytest -q -p no:cacheprovider "$root/test/python/test_gpu_warp_specialize.py" \
      "$root/test/python/test_gpu_cluster.py" "$root/test/python/test_gpu_convert_layout.py") \
    > "$out/sanitizer-$tool-probes.log" 2>&1 \
    || failed+=("compute-sanitizer $tool (probes)")
  tail -2 "$out/sanitizer-$tool-probes.log"
done
bench=("$@")
[ ${#bench[@]} -eq 0 ] && bench=(--shapes 2048x16,2048x64 --reps 5)
(cd /tmp && timeout 300 python3 -m sparse_mla.bench --out "$out/bench" "${bench[@]}") \
  > "$out/bench.log" 2>&1 || failed+=("benchmark")
tail -2 "$out/bench.log"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "gpu_check_bwd: all steps passed"
