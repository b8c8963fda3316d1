#!/usr/bin/env bash
# build-cuda.sh: compile ndvi.cu into ndvi.fatbin, the fat binary the cuda
# backend embeds (go generate ./shaders runs this). It needs nvcc from the
# CUDA toolkit named by CUDAToolkit in cuda.go; the GPU machine has it, CI
# does not, which is why the output is committed.
#
# The fat binary holds machine code (SASS) for every architecture from
# Turing to Blackwell that this nvcc can build (sm_75 ... sm_120) plus PTX of
# the newest, which newer GPUs compile at load time. ndvi.fatbin.sha256
# records the SHA-256 of ndvi.cu and of ndvi.fatbin in sha256sum format, so
# that `sha256sum -c ndvi.fatbin.sha256` (and TestCUDAFatbinMatchesSource)
# catches a source edited without rebuilding.
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "build-cuda.sh: $NVCC not found: the CUDA toolkit is needed to rebuild ndvi.fatbin" >&2; exit 1; }

want=$(sed -n 's/^const CUDAToolkit = "\(.*\)"$/\1/p' cuda.go)
have=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
if [ "$want" != "$have" ]; then
	echo "build-cuda.sh: nvcc is CUDA $have, cuda.go says the fat binary is built with CUDA $want: change CUDAToolkit in cuda.go together with the rebuild" >&2
	exit 1
fi

archs=""
supported=$("$NVCC" --list-gpu-code)
for a in 75 80 86 89 90 100 110 120; do
	if grep -qx "sm_$a" <<<"$supported"; then
		archs="$archs $a"
	fi
done
newest=${archs##* }
gencode=()
for a in $archs; do
	gencode+=(-gencode "arch=compute_$a,code=sm_$a")
done
gencode+=(-gencode "arch=compute_$newest,code=compute_$newest")

echo "nvcc $have: SASS for$(printf " sm_%s" $archs), PTX for compute_$newest"
"$NVCC" -fatbin -O3 -Xptxas -v "${gencode[@]}" -o ndvi.fatbin.tmp ndvi.cu
mv ndvi.fatbin.tmp ndvi.fatbin
sha256sum ndvi.cu ndvi.fatbin >ndvi.fatbin.sha256
cat ndvi.fatbin.sha256
