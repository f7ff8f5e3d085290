#!/usr/bin/env bash
# On the GPU machine with bundle/ carried: Nsight Compute sections of the
# backward main kernel at S=4096, H=16 and 64 (bench/profile_bwd.py); the
# reports go to $OUT.
set -u
g++ -O2 -std=c++17 -shared -fPIC -Ibundle/src/include bundle/src/Runtime/*.cpp -ldl -o bundle/sparse_mla/lib/libsparse_mla_runtime.so
export PYTHONPATH=$PWD/bundle
for h in 16 64; do
  timeout 200 ncu --kernel-name regex:sparse_mla_bwd_d --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
    python3 bench/profile_bwd.py --seq 4096 --heads $h > $OUT/ncu-h$h.txt 2>&1
  grep -E "Duration|Throughput|Busy|Stall|Warp Cycles|Issued|Eligible|Active Warps|L2 Hit|Registers|Block Limit|Achieved Occ|Max Bandwidth|Mem Pipes" $OUT/ncu-h$h.txt | head -60
done
