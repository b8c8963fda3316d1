package season

import (
	"context"
	"errors"
	"fmt"

	"canopy/compute"
)

// Keeper is implemented by backends that keep a cube on their device
// (cudaback's and glback's Cube): KeepCube uploads the cube once, as
// stored, and the Resident it returns runs any model of the cube's dates
// there. Timings are the upload's (Setup: device memory and one-time
// work).
type Keeper interface {
	KeepCube(c Cube) (Resident, compute.Timings, error)
}

// hostChunk is how many pixels a host run of a kept cube hands its runner
// at a time: a few milliseconds of work, so that a superseded run stops
// soon after it is cancelled.
const hostChunk = 1 << 15

// Kept is a cube kept where a backend computes, for a view that runs one
// model after another over the same cube (another model, number of
// harmonics, level, threshold, history or monitoring start): on the
// backend's device when it is a Keeper, uploaded once by Keep; otherwise
// on the host, where each run goes through the backend's Runner. Run
// answers the same on both, so that a view does not care which it has. A
// Kept is not safe for concurrent use.
type Kept struct {
	b      compute.Backend
	cube   Cube
	dev    Resident // nil: on the host
	upload compute.Timings
	// scratch holds one chunk of a host run (date-major).
	scratch []float32
	closed  bool
}

// Keep keeps c where b computes: on b's device when b is a Keeper (the
// upload happens now and is Kept.Upload), else on the host (c's values
// are used where they are, not copied; the caller keeps them unchanged).
// b must run per-pixel models (Runs).
func Keep(b compute.Backend, c Cube) (*Kept, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if !Runs(b) {
		return nil, fmt.Errorf("the %s backend does not run per-pixel models over a stack of dates", b.Name())
	}
	k := &Kept{b: b, cube: c}
	if kp, ok := b.(Keeper); ok {
		r, t, err := kp.KeepCube(c)
		if err != nil {
			return nil, err
		}
		k.dev, k.upload = r, t
	}
	return k, nil
}

// OnDevice says whether the cube is on the backend's device.
func (k *Kept) OnDevice() bool { return k.dev != nil }

// Backend is the name of the backend the cube is kept for.
func (k *Kept) Backend() string { return k.b.Name() }

// Upload is the cube's one upload (zero on the host).
func (k *Kept) Upload() compute.Timings { return k.upload }

// Pixels is the cube's number of pixels.
func (k *Kept) Pixels() int { return k.cube.Pixels }

// Run runs p's model (a plan of the cube's dates) over every pixel of the
// cube into out (len(p.Model.Outputs()) planes of Pixels values) and
// reports its phases; on the device there is no upload. On the host the
// cube goes to the runner in chunks of pixels and ctx is checked between
// them; on a device, whose runs take milliseconds, before the run. A
// cancelled run returns ctx's error and leaves out partly written.
func (k *Kept) Run(ctx context.Context, p *Plan, out [][]float32) (compute.Timings, error) {
	var t compute.Timings
	if k.closed {
		return t, errors.New("season: the kept cube was closed")
	}
	j := &Job{Plan: p, Cube: k.cube, Out: out}
	if err := j.Check(); err != nil {
		return t, err
	}
	if err := ctx.Err(); err != nil {
		return t, err
	}
	if k.dev != nil {
		return k.dev.Run(p, out)
	}
	P, T := k.cube.Pixels, len(k.cube.Dates)
	if P <= hostChunk {
		return RunJob(k.b, j)
	}
	if len(k.scratch) < T*hostChunk {
		k.scratch = make([]float32, T*hostChunk)
	}
	sub := make([][]float32, len(out))
	for p0 := 0; p0 < P; p0 += hostChunk {
		if err := ctx.Err(); err != nil {
			return t, err
		}
		n := min(hostChunk, P-p0)
		vals := k.scratch[:T*n]
		for d := range T {
			copy(vals[d*n:(d+1)*n], k.cube.Values[d*P+p0:d*P+p0+n])
		}
		for i := range out {
			sub[i] = out[i][p0 : p0+n]
		}
		ct, err := RunJob(k.b, &Job{Plan: p, Cube: Cube{Dates: k.cube.Dates, Pixels: n, Values: vals}, Out: sub})
		t.Add(ct)
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

// Close frees the device's copy of the cube; the backend stays open (it
// is the caller's).
func (k *Kept) Close() {
	if k.dev != nil {
		k.dev.Close()
		k.dev = nil
	}
	k.cube.Values = nil
	k.scratch = nil
	k.closed = true
}
