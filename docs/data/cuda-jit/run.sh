#!/usr/bin/env bash
# run.sh: the GPU half of the generated-kernel work (compute/cudaback
# RunJob), run ON the GPU machine from the repository root with test
# binaries built where Go is:
#
#   CANOPY_PTX_DIR=$PWD/bin/cudajob/ptx go test -run TestWritePTX ./compute/cudaback
#   go test -c -tags nogui -o bin/cudajob/cudaback.test ./compute/cudaback
#   go test -c -tags nogui -o bin/cudajob/cuda.test ./native/cuda
#
# usage: run.sh [STEP...]   (default: ptxas tests bench long)
#   ptxas  ptxas -arch=sm_90 -v on the written PTX
#   tests  the JIT and job tests, and the exact suite in every mode (short)
#   bench  the Go benchmarks of jobs ($BENCH, default Job), alone on the machine
#   long   side by side: the conformance suite at full sizes (TestJobs) and
#          compute-sanitizer's memcheck over the job tests (short sizes)
# Logs go to $OUT: env.log ptxas.log tests.log bench.log jobs.log sanitizer.log.
set -uo pipefail
B=${BIN:-bin/cudajob}
root=$PWD
OUT=${OUT:-$root/out/cuda-jit}
mkdir -p "$OUT"
export CANOPY_EXPECT_GPU=1
steps=${*:-ptxas tests bench long}
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,clocks.sm,clocks.mem --format=csv
	nvcc --version | tail -2
	echo "cores: $(nproc)"
} >"$OUT/env.log" 2>&1
for step in $steps; do
	case $step in
	ptxas)
		for f in "$B"/ptx/*.ptx; do
			echo "== $(basename "$f")"
			ptxas -arch=sm_90 -v -o /dev/null "$f" 2>&1
			echo "exit $?"
		done >"$OUT/ptxas.log" 2>&1
		echo "ptxas: $(grep -c '^exit 0' "$OUT/ptxas.log") of $(grep -c '^exit' "$OUT/ptxas.log") compiled"
		;;
	tests)
		(cd native/cuda && timeout 40 "$root/$B/cuda.test" -test.v -test.count=1 -test.run 'TestLoadModuleJIT|TestDriver$') >"$OUT/tests.log" 2>&1
		(cd compute/cudaback && timeout 90 "$root/$B/cudaback.test" -test.v -test.count=1 -test.short -test.run 'TestInfo|TestJobCache|TestJobBadPTX|TestJobModes|TestJobAndRunInTurn|TestJobsExact') >>"$OUT/tests.log" 2>&1
		grep -E '^(--- |ok|FAIL|PASS)' "$OUT/tests.log"
		;;
	bench)
		(cd compute/cudaback && timeout 150 "$root/$B/cudaback.test" -test.run '^$' -test.bench "${BENCH:-Job}" -test.benchtime 10x -test.timeout 150s) >"$OUT/bench.log" 2>&1
		grep -E '^Benchmark|FAIL|panic' "$OUT/bench.log" | sed 's/\s\+/ /g' | cut -c1-400
		;;
	long)
		cd compute/cudaback
		timeout 100 "$root/$B/cudaback.test" -test.v -test.count=1 -test.run '^TestJobs$' >"$OUT/jobs.log" 2>&1 &
		timeout 100 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 "$root/$B/cudaback.test" -test.short -test.count=1 -test.run '^(TestJobs|TestJobCache|TestJobModes|TestJobAndRunInTurn)$' >"$OUT/sanitizer.log" 2>&1 &
		wait
		cd "$root"
		for f in jobs sanitizer; do
			[ -f "$OUT/$f.log" ] || continue
			echo "== $f: $(grep -cE '^\s*--- PASS' "$OUT/$f.log") passed, $(grep -cE '^\s*--- FAIL' "$OUT/$f.log") failed"
			grep -hE '^(--- FAIL|FAIL|ok|PASS)|ERROR SUMMARY|LEAK SUMMARY' "$OUT/$f.log" | head -8
		done
		;;
	*) echo "run.sh: unknown step $step" >&2 ;;
	esac
done
