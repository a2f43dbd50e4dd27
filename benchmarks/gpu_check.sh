#!/usr/bin/env bash
# The checks a machine with a GPU runs first, in two parts of under 10 minutes each (a quarter of an
# hour of a borrowed GPU goes a long way):
#
#   benchmarks/gpu_check.sh measure   # the GPU tests, then the paper presets timed eager and captured
#   benchmarks/gpu_check.sh train     # the cpu preset's pairs a 2-core CPU cannot learn, then the
#                                     # paper protocol's small models side by side, runs exported
#
# What it reports goes to $OUT (default gpu-check/), at most six files a part: a log, the benchmarks'
# JSON records (they name the GPU), records files of the runs (`crasp store import FILE` brings them
# home) and the paper runs' report; the store itself stays in $STORE (default /tmp/gpu-check-runs).
# Every training command runs under --time-limit, so a part ends saved and exported within its budget;
# the same part run again resumes it. DEVICE=cpu runs the same parts on a CPU, with TINY=1 scaled down
# to a smoke test of the script itself.
set -u
part=${1:?usage: gpu_check.sh measure|train}
out=${OUT:-gpu-check}
device=${DEVICE:-cuda}
minutes=${MINUTES:-8}
store=${STORE:-/tmp/gpu-check-runs}
mkdir -p "$out"
cd "$(dirname "$0")/.."

part() { awk "BEGIN { print $minutes / $1 }"; }  # a share of the part's minutes

if [ "${TINY:-0}" = 1 ]; then
    timing=(--steps 2 --warmup 1 --repeats 1 --tasks bin_majority)
    papers=duan
    cpu_set=(--set steps=20 --set eval_every=10)
    paper_set=(--set steps=20 --set eval_every=10 --set test_size=8)
    tasks=(bin_majority)
else
    timing=(--steps 30 --warmup 5 --repeats 3)
    papers=xu,sabbaghi,duan
    cpu_set=(--set model=4l4h128d --set steps=4000)
    paper_set=()
    tasks=(bin_majority majority sort unique_copy bin_majority_interleave repeat_copy)
fi

case "$part" in
measure)
    log="$out/measure.log"
    python -m pytest -q tests/test_gpu.py tests/test_training_step.py 2>&1 | tail -n 40 | tee "$log"
    timeout $((minutes * 40)) python benchmarks/paper_presets.py --device "$device" --experiments algorithmic \
        "${timing[@]}" --side-by-side 4 2>&1 | tail -n 60 | tee -a "$log"
    timeout $((minutes * 20)) python benchmarks/paper_presets.py --device "$device" --experiments "$papers" \
        "${timing[@]}" 2>&1 | tail -n 60 | tee -a "$log"
    cp benchmarks/results/paper-presets-algorithmic-"${device%%:*}".json benchmarks/results/paper-presets-"${device%%:*}".json \
        "$out"/ 2>/dev/null
    ;;
train)
    log="$out/train.log"
    # (a) the cpu preset's pairs a 2-core CPU does not learn, at the budget an H100 showed to learn them
    crasp validate addition --variant ape --variant nope --preset cpu "${cpu_set[@]}" --device "$device" \
        --store "$store" --time-limit "$(part 2)" 2>&1 | grep -v "step/s" | tail -n 30 | tee "$log"
    crasp validate unique_copy bin_majority_interleave --variant nope --preset cpu "${cpu_set[@]}" --device "$device" \
        --store "$store" --time-limit "$(part 4)" 2>&1 | grep -v "step/s" | tail -n 30 | tee -a "$log"
    crasp store export "$out/cpu.records" --preset cpu --store "$store"
    # (b) Huang et al.'s protocol, small models first, four groups at a time
    crasp validate "${tasks[@]}" --variant ape --variant nope --preset paper "${paper_set[@]}" --device "$device" \
        --executor side-by-side --at-once 4 --store "$store" --time-limit "$(part 4)" 2>&1 \
        | grep -v "step/s" | tail -n 30 | tee -a "$log"
    crasp store export "$out/paper.records" --preset paper --store "$store"
    crasp report --store "$store" --preset paper --out "$store/report-paper" > /dev/null 2>&1
    cp "$store/report-paper/report.md" "$out/report-paper.md" 2>/dev/null
    ;;
*)
    echo "usage: gpu_check.sh measure|train" >&2
    exit 2
    ;;
esac
