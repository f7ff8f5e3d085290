#!/usr/bin/env bash
# On the GPU machine with the wheel installed (tools/gpu_run.sh): Nsight
# Compute sections and stall reasons of the backward main kernel at S=4096
# for each head count given (default 16 64; bench/profile_bwd.py). With
# SOURCE=1 it also samples the stall reasons of each SASS instruction
# (SourceCounters) and writes them as ncu-h<H>-source.csv. The reports go to
# $OUT. PROFILE_ARGS: more options of bench/profile_bwd.py (e.g. "--d-tail 0").
# usage: [SOURCE=1] [PROFILE_ARGS=...] tools/profile_bwd.sh [HEADS ...]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/profile}
mkdir -p "$out"
heads=("$@")
[ ${#heads[@]} -eq 0 ] && heads=(16 64)
cd /tmp || exit 1
for h in "${heads[@]}"; do
  timeout 200 ncu --kernel-name regex:sparse_mla_bwd_d --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section InstructionStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:l1tex__t_requests_pipe_lsu_mem_global_op_red.*sum,regex:lts__t_sectors_op_red.*sum,smsp__inst_executed_op_global_red.sum" \
    python3 "$root/bench/profile_bwd.py" --seq 4096 --heads "$h" ${PROFILE_ARGS:-} > "$out/ncu-h$h.txt" 2>&1
  if [ "${SOURCE:-0}" = 1 ]; then
    timeout 200 ncu --kernel-name regex:sparse_mla_bwd_d --launch-skip 1 --launch-count 1 \
      --section SourceCounters --section WarpStateStats -f -o "$out/src-h$h" \
      python3 "$root/bench/profile_bwd.py" --seq 4096 --heads "$h" ${PROFILE_ARGS:-} > /dev/null 2>&1
    ncu -i "$out/src-h$h.ncu-rep" --page source --csv --print-source sass > "$out/ncu-h$h-source.csv" 2>&1
    rm -f "$out/src-h$h.ncu-rep"
  fi
  grep -E "Duration|Cache Throughput|Issued Warp|stalled|_red" "$out/ncu-h$h.txt" | awk '$NF+0 > 0.05 || /Duration|Throughput|Issued/' | head -40
done
