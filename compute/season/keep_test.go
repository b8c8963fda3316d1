package season_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// keepPlans are the models a view re-runs over one kept cube.
func keepPlans(t *testing.T, dates []float64) []*season.Plan {
	t.Helper()
	var ps []*season.Plan
	for _, m := range seasontest.Models(2019, 2020, 2021) {
		p, err := season.NewPlan(m, dates)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// sameOut fails unless a and b are the same planes, bit for bit.
func sameOut(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	for i := range a {
		for px := range a[i] {
			if math.Float32bits(a[i][px]) != math.Float32bits(b[i][px]) {
				t.Fatalf("%s: output %d pixel %d: %v, want %v", what, i, px, a[i][px], b[i][px])
			}
		}
	}
}

// On the host a kept cube larger than a chunk runs every model through
// the backend's runner, chunk after chunk, with the outputs of one job over
// the whole cube; a cancelled run stops with the context's error.
func TestKeepHost(t *testing.T) {
	b, err := compute.New(compute.NameGoParallel)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cube := seasontest.Cube(5, 12, 70000, 2019, 2021, 2020, 0.3)
	k, err := season.Keep(b, cube)
	if err != nil {
		t.Fatal(err)
	}
	if k.OnDevice() || k.Upload() != (compute.Timings{}) || k.Backend() != compute.NameGoParallel {
		t.Fatalf("go-parallel keeps the cube on a device (%v, upload %+v)", k.OnDevice(), k.Upload())
	}
	for _, p := range keepPlans(t, cube.Dates)[8:] {
		j, whole := season.NewJob(p, cube), season.NewJob(p, cube)
		if _, err := k.Run(context.Background(), p, j.Out); err != nil {
			t.Fatal(err)
		}
		if _, err := season.RunJob(b, whole); err != nil {
			t.Fatal(err)
		}
		sameOut(t, p.Model.Kind.String(), j.Out, whole.Out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := keepPlans(t, cube.Dates)[8]
	if _, err := k.Run(ctx, p, season.NewJob(p, cube).Out); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled run: %v", err)
	}
	other, _ := season.NewPlan(p.Model, cube.Dates[1:])
	if _, err := k.Run(context.Background(), other, season.NewJob(other, season.Cube{Dates: cube.Dates[1:], Pixels: cube.Pixels}).Out); err == nil {
		t.Fatal("a plan of other dates ran")
	}
	k.Close()
	if _, err := k.Run(context.Background(), p, season.NewJob(p, cube).Out); err == nil {
		t.Fatal("a closed cube ran")
	}
}

// keeper is go-parallel with a "device" cube that counts its uploads and
// runs: what a GPU backend does, through the same interface.
type keeper struct {
	compute.Backend
	uploads, runs int
}

func (k *keeper) RunSeries(j *season.Job) (compute.Timings, error) {
	return k.Backend.(season.Runner).RunSeries(j)
}

func (k *keeper) KeepCube(c season.Cube) (season.Resident, compute.Timings, error) {
	k.uploads++
	return &devCube{k: k, c: season.Cube{Dates: c.Dates, Pixels: c.Pixels, Values: append([]float32(nil), c.Values...)}}, compute.Timings{Upload: 1}, nil
}

type devCube struct {
	k *keeper
	c season.Cube
}

func (d *devCube) Run(p *season.Plan, out [][]float32) (compute.Timings, error) {
	d.k.runs++
	return d.k.RunSeries(&season.Job{Plan: p, Cube: d.c, Out: out})
}

func (d *devCube) Close() { d.c.Values = nil }

// A backend that keeps cubes gets the cube once, and every model runs on
// its copy.
func TestKeepDevice(t *testing.T) {
	gp, err := compute.New(compute.NameGoParallel)
	if err != nil {
		t.Fatal(err)
	}
	defer gp.Close()
	b := &keeper{Backend: gp}
	cube := seasontest.Cube(6, 16, 500, 2019, 2021, 2020, 0.3)
	k, err := season.Keep(b, cube)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if !k.OnDevice() || k.Upload().Upload != 1 {
		t.Fatalf("on device %v, upload %+v", k.OnDevice(), k.Upload())
	}
	ps := keepPlans(t, cube.Dates)
	for _, p := range ps {
		j, whole := season.NewJob(p, cube), season.NewJob(p, cube)
		if _, err := k.Run(context.Background(), p, j.Out); err != nil {
			t.Fatal(err)
		}
		if _, err := season.RunJob(gp, whole); err != nil {
			t.Fatal(err)
		}
		sameOut(t, p.Model.Kind.String(), j.Out, whole.Out)
	}
	if b.uploads != 1 || b.runs != len(ps) {
		t.Fatalf("%d uploads and %d runs for %d models", b.uploads, b.runs, len(ps))
	}
}
