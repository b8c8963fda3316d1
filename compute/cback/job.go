package cback

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/internal/vec"
	"canopy/native/cpu"
)

// RunJob runs any index job with the C block interpreter (native/cpu): the
// job's program runs op by op over blocks of cpu.Block pixels that stay in
// the core's cache, each op one AVX2 pass where the CPU has it, the bands
// read as stored and converted in the load. Each worker of the pool takes
// one contiguous span of the image in one cgo call, with its own scratch
// registers. The results equal the go backend's (index.Program.Eval32)
// bit for bit.
func (b *Backend) RunJob(j *compute.Job) (compute.Timings, error) {
	if err := j.Check(); err != nil {
		return compute.Timings{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var t compute.Timings
	t.Setup = b.run.Start()
	t0 := time.Now()
	allocated, err := b.task.prepare(j, b.run.Workers())
	if err != nil {
		b.task.finish()
		return t, err
	}
	prep := time.Since(t0)
	t0 = time.Now()
	b.run.RunTask(j.Pixels(), &b.task)
	t.Kernel = time.Since(t0)
	// Preparing the job (converting the band descriptors, pinning) is part
	// of every run; allocating the workers' scratch happens once: setup.
	if allocated {
		t.Setup += prep
	} else {
		t.Kernel += prep
	}
	t.Total = t.Kernel
	return t, b.task.finish()
}

// jobTask is a job's program as a par.Task: each worker takes a scratch
// register file from the free list, runs its span in one C call and gives
// the scratch back, so that a run allocates nothing once the register files
// are big enough.
type jobTask struct {
	code    cpu.Code
	prog    cpu.Program
	bands   []cpu.Band
	scratch chan []float32
	size    int

	mu  sync.Mutex
	err error
}

// sampleTypes maps compute's stored types to the C loads'.
var sampleTypes = map[compute.DataType]cpu.SampleType{
	compute.U8: cpu.U8, compute.U16: cpu.U16, compute.I16: cpu.I16,
	compute.U32: cpu.U32, compute.I32: cpu.I32, compute.F32: cpu.F32,
}

// prepare converts j's bands for the C loads (Job.Value32's conversion),
// pins the job's memory and makes sure every worker has scratch (reporting
// whether it had to allocate it).
func (t *jobTask) prepare(j *compute.Job, workers int) (allocated bool, err error) {
	t.bands = t.bands[:0]
	for _, band := range j.Bands {
		st, ok := sampleTypes[band.Plane.Type]
		if !ok {
			return false, fmt.Errorf("%s band: the c backend cannot read %s samples", band.Role, band.Plane.Type)
		}
		r := band.Radiometry
		t.bands = append(t.bands, cpu.Band{Type: st, Data: band.Plane.Data,
			Radiometry: !r.IsIdentity(), Add: float32(r.Add), Scale: float32(r.Scale), Offset: float32(r.Offset),
			NoData: band.NoData, HasNoData: band.HasNoData})
	}
	if len(t.bands) != len(j.Program.Inputs) {
		return false, fmt.Errorf("%d bands for a program of %d inputs", len(t.bands), len(j.Program.Inputs))
	}
	marshal(j.Program, &t.code)
	if err := t.prog.Prepare(&t.code, j.Pixels(), t.bands, j.Out, j.Mask, j.Pixels() >= vec.StreamPixels); err != nil {
		return false, err
	}
	need := t.prog.ScratchFloats()
	if t.scratch == nil || cap(t.scratch) < workers || t.size < need {
		t.scratch = make(chan []float32, workers)
		for range workers {
			t.scratch <- t.prog.NewScratch()
		}
		t.size = need
		allocated = true
	}
	t.err = nil
	return allocated, nil
}

// Do runs the program over pixels [lo, hi).
func (t *jobTask) Do(lo, hi int) {
	s := <-t.scratch
	err := t.prog.Run(s, lo, hi)
	t.scratch <- s
	if err != nil {
		t.mu.Lock()
		t.err = errors.Join(t.err, err)
		t.mu.Unlock()
	}
}

// finish unpins the job's memory and returns the workers' error.
func (t *jobTask) finish() error {
	t.prog.Release()
	clear(t.bands)
	err := t.err
	t.err = nil
	return err
}
