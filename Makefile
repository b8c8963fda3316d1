# Canopy. `make run` opens the app on a generated scene; `make test` runs
# every test (unit, GPU backends where present, GDAL cross-checks, GUI).
export PATH := $(PATH):/usr/local/go/bin
export LANG ?= en_US.UTF-8
export CGO_ENABLED := 1
# The GDAL and NumPy cross-checks fail instead of skipping when GDAL is
# missing (scripts/setup installs it).
export CANOPY_EXPECT_GDAL ?= 1

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

test: setup vet
	go test -count=1 ./...
	go test -count=1 -race -short ./compute/... ./ui/...
	CANOPY_NOSIMD=1 go test -count=1 -short ./compute/internal/vec ./compute/goback   # the Go fallback of the AVX2 kernels
	cd compute/internal/vec/asm && go test -count=1 .   # the committed assembly is what the generator writes
	go build -tags nogui -o /dev/null .
	./scripts/gui-smoke
	./scripts/gui-smoke --backend gl out/gui-smoke-gl.png

bench: build
	./canopy bench --size 1024,2048,4096 --repeat 10

clean:
	rm -rf canopy bin
