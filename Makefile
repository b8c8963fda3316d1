# Canopy. `make run` opens the app on a generated scene; `make test` runs
# every test (unit, GPU backends where present, GDAL cross-checks, GUI).
export PATH := $(PATH):/usr/local/go/bin
export LANG ?= en_US.UTF-8
export CGO_ENABLED := 1
# Go 1.26's simd/archsimd: go-parallel's kernel runs 8-wide on AVX2 CPUs.
export GOEXPERIMENT := simd

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
	GOEXPERIMENT= go test -count=1 -short ./compute/   # the scalar kernel of builds without simd
	go build -tags nogui -o /dev/null .
	./scripts/gui-smoke
	./scripts/gui-smoke --backend gl out/gui-smoke-gl.png

bench: build
	./canopy bench --size 1024,2048,4096 --repeat 10

clean:
	rm -rf canopy bin
