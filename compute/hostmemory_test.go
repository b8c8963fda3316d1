package compute_test

import (
	"testing"

	"canopy/compute"
)

// hostBackend is the go backend with host buffers of its own, recording
// where the bands and the output of its last Run were.
type hostBackend struct {
	compute.Backend
	red, nir, out  []float32
	gotRed, gotOut *float32
}

func (h *hostBackend) HostBuffers(w, ht int) (red, nir, out []float32, err error) {
	n := w * ht
	if len(h.red) != n {
		h.red, h.nir, h.out = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	return h.red, h.nir, h.out, nil
}

func (h *hostBackend) Run(in compute.Input, out []float32) (compute.Timings, error) {
	h.gotRed, h.gotOut = &in.Red[0], &out[0]
	return h.Backend.Run(in, out)
}

// TestBenchHostBuffers: with HostBuffers, Bench runs the backend on its own
// planes, says so (mode host), counts the staging as setup, and still
// leaves the NDVI in the caller's output; without, the caller's memory.
func TestBenchHostBuffers(t *testing.T) {
	g, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostBackend{Backend: g}
	red, nir, err := compute.Fake(compute.SceneNoise, 64, 32, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := compute.Input{Width: 64, Height: 32, Red: red.Data, NIR: nir.Data}
	out := make([]float32, in.Pixels())
	r := compute.Bench(h, in, out, compute.BenchOptions{Repeat: 2, HostCeiling: 1, HostBuffers: true})
	if r.Error != "" || !r.Verified || !r.HostBuffers || r.Mode != compute.ModeHost || r.SetupMS <= 0 {
		t.Fatalf("host buffers: %+v", r)
	}
	if h.gotRed != &h.red[0] || h.gotOut != &h.out[0] {
		t.Error("Run did not get the backend's host planes")
	}
	if rep := compute.Verify(in, out); !rep.OK() {
		t.Errorf("the caller's output after a host-buffer bench: %s", rep)
	}
	clear(out)
	r = compute.Bench(h, in, out, compute.BenchOptions{Repeat: 1, HostCeiling: 1})
	if r.HostBuffers || r.Mode == compute.ModeHost || h.gotRed != &in.Red[0] || h.gotOut != &out[0] || !r.Verified {
		t.Errorf("without host buffers: %+v", r)
	}
}
