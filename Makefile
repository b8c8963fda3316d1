# Canopy. `make run` opens the app on a generated scene; `make test` runs
# every test (unit, GPU backends where present, GDAL cross-checks, GUI,
# the Windows build under wine).
export PATH := $(PATH):/usr/local/go/bin
export LANG ?= en_US.UTF-8
export CGO_ENABLED := 1
# The GDAL and NumPy cross-checks fail instead of skipping when GDAL is
# missing (scripts/setup installs it).
export CANOPY_EXPECT_GDAL ?= 1
# The strucchange cross-check of the MOSUM monitoring fails instead of
# skipping when R's strucchange is missing (scripts/setup installs it).
export CANOPY_EXPECT_R ?= 1
# The remote reads' test against a real web server (compute/remote
# TestNginx) fails instead of skipping when Debian's nginx is missing
# (scripts/setup installs it).
export CANOPY_EXPECT_NGINX ?= 1

.PHONY: run test setup build nogui vet bench clean

setup:
	./scripts/setup

build: setup
	go build -o canopy .

nogui:
	go build -tags nogui -o bin/canopy-nogui .

run: build
	./canopy

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet ./...
	go vet -tags nogui .

# go test's own 10-minute limit per package is a clock a busy machine trips
# (the race run of one package took longer at load 8): the tests that can
# hang bound themselves, so the limit here is only a last resort.
GOTEST := go test -count=1 -timeout 60m

# Every test runs once. The packages with concurrency run under the race
# detector with -short, where the heavy tests take their lighter form
# (fewer layouts or depths, tiny scenes, a quarter of an interpreter's
# cases); then the tests that depend on -short (scripts/shorttests finds
# them: those that reach testing.Short) run again in full without the
# detector, and the packages without concurrency run in full. RACEFREE
# names those: their code, and the code their tests reach, starts no
# goroutine and shares no memory (pure functions: the index language,
# number formats, the AVX2 kernels), so the detector has nothing to look
# at there. ui comes first so that its long run overlaps the others.
RACEFREE := canopy/compute/index canopy/compute/index/indextest \
	canopy/compute/internal/cputime canopy/compute/internal/infile \
	canopy/compute/internal/retry canopy/compute/internal/vec \
	canopy/compute/usererr canopy/ui/locale canopy/ui/render/numfmt
RACEPKGS = $(shell go list ./ui/... ./compute/... | grep -vxF $(addprefix -e ,$(RACEFREE)))
# The race run leaves the text and icon rasterisers the window draws with
# uninstrumented (go-text's shaper and font parser, freetype, x/image's
# fonts, go-latex, srwiley's SVG rasteriser): they read only immutable
# strings, fonts and icons, so the detector has no race of ours to find
# there, and they were a tenth of ui's time under it. The pointer checks
# (checkptr, which -race turns on) are left out of math's bit casts and
# x/image's scalers, which the painter runs over every image, for the same
# reason; our packages and Fyne's keep both.
RACETEXT := github.com/go-text/... github.com/golang/freetype/... golang.org/x/image/font/... \
	codeberg.org/go-latex/... github.com/srwiley/...
RACENOCHECKPTR := math golang.org/x/image/draw golang.org/x/image/math/...
RACEFLAGS := $(foreach p,$(RACETEXT),'-gcflags=$(p)=-race=false -d=checkptr=0') \
	$(foreach p,$(RACENOCHECKPTR),'-gcflags=$(p)=-d=checkptr=0')
# The longest packages of the -short tests' full run go first (go list
# names a package once), so that they overlap the rest instead of ending
# the run alone: the hostile corpora's child processes, llvmpipe's suites.
FULLFIRST := canopy/compute/internal/hostile canopy/compute/glback
PLAINPKGS = $(shell go list ./... | grep -vxF $(addprefix -e ,$(RACEPKGS)))

test: setup vet
	$(GOTEST) -race $(RACEFLAGS) -short $(RACEPKGS)
	$(GOTEST) $(PLAINPKGS)
	args=$$(go run ./scripts/shorttests -args $$(go list -f '{{.Dir}}' $(FULLFIRST) $(RACEPKGS))) && if [ -n "$$args" ]; then $(GOTEST) $$args; fi
	CANOPY_NOSIMD=1 $(GOTEST) -short ./compute/internal/vec ./compute/goback   # the Go fallback of the AVX2 kernels
	cd compute/internal/vec/asm && $(GOTEST) .   # the committed assembly is what the generator writes
	go build -tags nogui -o /dev/null .
	# The GUI smoke tests (the window under Xvfb, once on gl) and the
	# Windows smoke test (the zip cross-built and run under wine, the Linux
	# tarball installed) side by side: each keeps about one core busy (a
	# build, the app, wine), so on two cores together they take the longer
	# one's time. The Windows test's output comes after the GUI tests'.
	mkdir -p out && { ./scripts/windows-smoke >out/windows-smoke.log 2>&1; echo $$? >out/windows-smoke.rc; } & \
	./scripts/gui-smoke && ./scripts/gui-smoke --backend gl out/gui-smoke-gl.png; g=$$?; \
	wait; cat out/windows-smoke.log; w=$$(cat out/windows-smoke.rc); \
	[ $$g = 0 ] || echo "make test: the GUI smoke test failed (status $$g)" >&2; \
	[ $$w = 0 ] || echo "make test: the Windows smoke test failed (status $$w)" >&2; \
	[ $$g = 0 ] && [ $$w = 0 ]

bench: build
	./canopy bench --size 1024,2048,4096 --repeat 10

clean:
	rm -rf canopy bin
