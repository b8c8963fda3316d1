#!/usr/bin/env bash
# bench/peers/pipeline.sh: the block pipeline against GDAL, end to end.
#
#   bench/peers/pipeline.sh [CANOPY] [SIZE] [RUNS]      (default ./canopy 10980 5)
#
# 1. Inputs: `canopy fake` (the landscape, float32) turned by gdal_translate
#    into a red/NIR pair of uint16 digital numbers (reflectance x 10000),
#    DEFLATE, predictor 2, 256x256 tiles: a Sentinel-2 10 m tile's size.
# 2. RUNS rounds, alternating, each timed by /usr/bin/time -v (wall seconds
#    and peak resident memory):
#      canopy      canopy compute --red R --nir N --tif O.tif
#                  (NDVI on the default backend, verified against the
#                  float64 truth, written as a COG with overviews)
#      canopy-nv   the same with --no-verify
#      gdal_calc   gdal_calc.py NDVI to Float32, DEFLATE, predictor 3,
#                  tiled, NUM_THREADS=ALL_CPUS, --NoDataValue=-9999 (GDAL
#                  3.6 writes an all-nodata file with nan); no overviews
#    and prints the medians side by side, with canopy / gdal_calc.
# 3. The pipeline's throughput against decoding alone, from the Go
#    benchmark (compute/pipeline BenchmarkPipeline) on the same pair, when
#    `go` is on PATH and the source is here.
# 4. With BIG=40000 in the environment: a BIGxBIG uint16 pair (gdal_translate
#    upsamples the small pair; several minutes) and one canopy compute
#    --no-verify on it, its peak memory against the 1 GiB target.
#
# GDAL and GNU time from elsewhere (a host without them: the GPU machine),
# each a command line, split at spaces:
#   GDAL_RUNNER=scripts/debian-gdal   all four below through that runner
#                                     (Debian 12's GDAL from scripts/gdal-bundle)
#   GDAL_TRANSLATE, GDALINFO          default gdal_translate, gdalinfo
#   GDAL_CALC                         default /usr/bin/python3 /usr/bin/gdal_calc.py
#   TIME_CMD                          default /usr/bin/time
#
# The machine may be shared: say so next to the numbers.
set -euo pipefail
canopy=${1:-./canopy}
size=${2:-10980}
runs=${3:-5}
here=$(cd "$(dirname "$0")/../.." && pwd)
T=${TMPDIR_BENCH:-$(mktemp -d)}
mkdir -p "$T"
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export GDAL_CACHEMAX=${GDAL_CACHEMAX:-512}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
r=${GDAL_RUNNER:+$GDAL_RUNNER }
read -ra gdal_translate <<<"${GDAL_TRANSLATE:-${r}gdal_translate}"
read -ra gdalinfo <<<"${GDALINFO:-${r}gdalinfo}"
if [ -n "$r" ]; then calc_default="${r}gdal_calc.py"; else calc_default="$py /usr/bin/gdal_calc.py"; fi
read -ra gdal_calc <<<"${GDAL_CALC:-$calc_default}"
read -ra time_cmd <<<"${TIME_CMD:-${r:-/usr/bin/}time}"

echo "# $(date -u +%F) $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $("$canopy" backends | head -3 | tr -s ' ' | paste -sd';')" >&2
echo "# $("${gdalinfo[@]}" --version); gdal_calc: ${gdal_calc[*]}" >&2

mkpair() { # size dir
  local n=$1 d=$2
  [ -f "$d/nir.tif" ] && return
  "$canopy" fake --scene landscape --seed 1 --size "$n" --red "$d/red32.tif" --nir "$d/nir32.tif" >&2
  for b in red nir; do
    "${gdal_translate[@]}" -q -ot UInt16 -scale 0 1 0 10000 -co COMPRESS=DEFLATE -co PREDICTOR=2 -co TILED=YES "$d/${b}32.tif" "$d/$b.tif"
  done
  rm -f "$d/red32.tif" "$d/nir32.tif"
}
mkpair "$size" "$T"
ls -l "$T/red.tif" "$T/nir.tif" >&2

# timed NAME CMD...: appends "NAME wall_s peak_kb" to $T/runs.
timed() {
  local name=$1; shift
  rm -f "$T/out.tif"
  "${time_cmd[@]}" -v -o "$T/time.txt" "$@" >/dev/null 2>"$T/err.txt" || { cat "$T/err.txt" >&2; exit 1; }
  local wall peak cpu
  wall=$(awk -F': ' '/Elapsed/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$T/time.txt")
  peak=$(awk -F': ' '/Maximum resident/ {print $2}' "$T/time.txt")
  cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$T/time.txt")
  echo "$name $wall $peak $cpu" >>"$T/runs"
  echo "  $name: ${wall} s, $((peak / 1024)) MiB, cpu ${cpu} s" >&2
}
: >"$T/runs"
for r in $(seq "$runs"); do
  echo "round $r" >&2
  timed canopy "$canopy" compute --red "$T/red.tif" --nir "$T/nir.tif" --tif "$T/out.tif"
  timed canopy-nv "$canopy" compute --red "$T/red.tif" --nir "$T/nir.tif" --tif "$T/out.tif" --no-verify
  timed gdal_calc "${gdal_calc[@]}" --quiet --overwrite -A "$T/red.tif" -B "$T/nir.tif" --outfile="$T/out.tif" \
    --calc="(B.astype(numpy.float32)-A)/(B.astype(numpy.float32)+A)" --type=Float32 --NoDataValue=-9999 \
    --co=COMPRESS=DEFLATE --co=PREDICTOR=3 --co=TILED=YES --co=NUM_THREADS=ALL_CPUS
done
awk '
  { w[$1] = w[$1] " " $2; m[$1] = m[$1] " " $3; c[$1] = c[$1] " " $4 }
  function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END {
    gw = med(w["gdal_calc"]); gm = med(m["gdal_calc"]); gc = med(c["gdal_calc"])
    printf "| command | wall s, median [runs] | CPU s (user+sys), median | peak MiB, median | wall / gdal_calc | CPU / gdal_calc | memory / gdal_calc |\n|---|---|---|---|---|---|---|\n"
    n = split("canopy canopy-nv gdal_calc", names, " ")
    for (i = 1; i <= n; i++) { k = names[i]; mw = med(w[k]); mm = med(m[k]); mc = med(c[k])
      printf "| %s | %.2f [%s ] | %.2f | %.0f | %.2f | %.2f | %.2f |\n", k, mw, w[k], mc, mm / 1024, mw / gw, mc / gc, mm / gm }
  }' "$T/runs"

if command -v go >/dev/null && [ -f "$here/compute/pipeline/bench_test.go" ]; then
  (cd "$here" && go test ./compute/pipeline -run '^$' -bench Pipeline -benchtime 3x -args -pipeline-red "$T/red.tif" -pipeline-nir "$T/nir.tif") | grep -E '^Benchmark' || true
fi

if [ -n "${BIG:-}" ]; then
  mkdir -p "$T/big"
  if [ ! -f "$T/big/nir.tif" ]; then
    for b in red nir; do
      "${gdal_translate[@]}" -q -outsize "$BIG" "$BIG" -r bilinear -co COMPRESS=DEFLATE -co PREDICTOR=2 -co TILED=YES -co BIGTIFF=YES "$T/$b.tif" "$T/big/$b.tif"
    done
  fi
  ls -l "$T/big" >&2
  timed big "$canopy" compute --red "$T/big/red.tif" --nir "$T/big/nir.tif" --tif "$T/big/out.tif" --no-verify --json
  tail -1 "$T/runs" | awk '{printf "%dx%d uint16 pair, --no-verify: %.1f s, peak %.0f MiB (target 1024)\n", '"$BIG"', '"$BIG"', $2, $3 / 1024}'
fi
