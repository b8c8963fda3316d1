package season_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// fakeDevice is one "device" of a backend with several: it runs jobs on
// the go backend and says which blocks it ran; before running a block it
// calls hold (which may wait), and it fails the block fail names.
type fakeDevice struct {
	compute.Backend
	id     int
	multi  *fakeMulti
	ran    []int
	closed bool
}

type fakeMulti struct {
	mu      sync.Mutex
	count   int
	blockOf map[*season.Job]int
	hold    func(k int)
	after   func(k int)
	fail    int // a block that fails (−1: none)
	broken  int // a device that cannot run (0: none)
	devs    []*fakeDevice
}

func (d *fakeDevice) RunSeries(j *season.Job) (compute.Timings, error) {
	m := d.multi
	m.mu.Lock()
	k := m.blockOf[j]
	m.mu.Unlock()
	if m.hold != nil {
		m.hold(k)
	}
	d.ran = append(d.ran, k)
	if k == m.fail {
		return compute.Timings{}, errors.New("the card fell off the bus")
	}
	t, err := season.RunJob(d.Backend, j)
	if m.after != nil {
		m.after(k)
	}
	t.Kernel = 1 // one "nanosecond" a block, to see the timings summed
	return t, err
}

func (d *fakeDevice) DeviceCount() (int, error) { return d.multi.count, nil }

func (d *fakeDevice) OnDevice(i int) (compute.Backend, error) {
	if i < 0 || i >= d.multi.count {
		return nil, errors.New("no such device")
	}
	o := &fakeDevice{Backend: d.Backend, id: i, multi: d.multi}
	d.multi.devs = append(d.multi.devs, o)
	return o, nil
}

func (d *fakeDevice) Close() error { d.closed = true; return nil }

func (d *fakeDevice) Info() compute.Info {
	if d.id == d.multi.broken {
		return compute.Info{Name: "fake", Reason: "it is on fire"}
	}
	return compute.Info{Name: "fake", Available: true}
}

// TestDeal deals the blocks of a random cube to three fake devices: the
// planes sunk are, in block order, those of one go backend over the
// whole cube, bit for bit, though the devices finish out of order; every
// device runs blocks; an error of one device stops the run with that
// error, named by its device, and nothing after it is sunk.
func TestDeal(t *testing.T) {
	gb, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer gb.Close()
	const T, P, blocks = 24, 1000, 13
	cube := seasontest.Cube(7, T, P, 2020, 2022, 2021.5, 0.3)
	dates := cube.Dates
	m := season.DefaultMosum(season.Period{From: 2020, To: 2021.5}, season.Period{From: 2021.5, To: math.Inf(1)})
	m.Harmonics = 1
	plan, err := season.NewPlan(m, dates)
	if err != nil {
		t.Fatal(err)
	}
	whole := season.NewJob(plan, cube)
	if _, err := season.RunJob(gb, whole); err != nil {
		t.Fatal(err)
	}
	span := func(k int) (int, int) { return k * P / blocks, (k + 1) * P / blocks }

	run := func(fm *fakeMulti, n int) ([][]float32, []int, compute.Timings, error) {
		first := &fakeDevice{Backend: gb, multi: fm}
		fm.devs = []*fakeDevice{first}
		bs, closeAll, err := season.Spread(first, n)
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll()
		got := make([][]float32, len(m.Outputs()))
		var order []int
		tm, err := season.Deal(context.Background(), bs, blocks, func(k int, reuse *season.Job) (*season.Job, error) {
			a, b := span(k)
			c := season.Cube{Dates: dates, Pixels: b - a, Values: make([]float32, T*(b-a))}
			for d := range T {
				copy(c.Values[d*(b-a):], cube.Values[d*P+a:d*P+b])
			}
			j := season.NewJob(plan, c)
			fm.mu.Lock()
			fm.blockOf[j] = k
			fm.mu.Unlock()
			return j, nil
		}, func(k int, j *season.Job) error {
			order = append(order, k)
			for i, o := range j.Out {
				got[i] = append(got[i], o...)
			}
			return nil
		})
		return got, order, tm, err
	}

	// Block 0 waits until block 1 has run, block 1 until block 2 has
	// started: the devices finish out of order, and all three run.
	started2, done1 := make(chan struct{}), make(chan struct{})
	fm := &fakeMulti{count: 3, blockOf: map[*season.Job]int{}, fail: -1}
	fm.hold = func(k int) {
		switch k {
		case 0:
			<-done1
		case 1:
			<-started2
		case 2:
			close(started2)
		}
	}
	fm.after = func(k int) {
		if k == 1 {
			close(done1)
		}
	}
	got, order, tm, err := run(fm, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(fm.devs) != 3 {
		t.Fatalf("%d devices spread, want 3", len(fm.devs))
	}
	if !slices.Equal(order, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) {
		t.Errorf("sunk in the order %v", order)
	}
	if tm.Kernel != blocks {
		t.Errorf("kernel time %v, want %d blocks' summed", tm.Kernel, blocks)
	}
	var all []int
	for i, d := range fm.devs {
		if len(d.ran) == 0 {
			t.Errorf("device %d ran no block", i)
		}
		all = append(all, d.ran...)
		if i > 0 && !d.closed {
			t.Errorf("device %d was not closed", i)
		}
	}
	if fm.devs[0].closed {
		t.Error("the caller's backend was closed")
	}
	slices.Sort(all)
	if !slices.Equal(all, order) {
		t.Errorf("blocks run %v", all)
	}
	for i := range got {
		for p, v := range got[i] {
			if w := whole.Out[i][p]; math.Float32bits(v) != math.Float32bits(w) {
				t.Fatalf("plane %s pixel %d: %v dealt, %v whole", m.Outputs()[i], p, v, w)
			}
		}
	}

	// One device: the same path, the same planes.
	fm1 := &fakeMulti{count: 1, blockOf: map[*season.Job]int{}, fail: -1}
	got1, order1, _, err := run(fm1, 0)
	if err != nil || len(order1) != blocks || len(fm1.devs) != 1 {
		t.Fatalf("one device: %v, %d blocks, %d devices", err, len(order1), len(fm1.devs))
	}
	for i := range got1 {
		if !slices.EqualFunc(got1[i], got[i], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("one device: plane %d differs", i)
		}
	}

	// Block 5 fails on whichever device takes it.
	fe := &fakeMulti{count: 3, blockOf: map[*season.Job]int{}, fail: 5}
	_, order, _, err = run(fe, 3)
	if err == nil || !strings.Contains(err.Error(), "the card fell off the bus") || !strings.Contains(err.Error(), "device ") {
		t.Fatalf("a failing device: %v", err)
	}
	if len(order) > 5 || !slices.Equal(order, []int{0, 1, 2, 3, 4}[:len(order)]) {
		t.Errorf("with block 5 failed, sunk %v", order)
	}
}

// TestDealErrors: an error of build or of sink, or a cancelled context,
// stops the dealing with that error; more devices than there are, or
// several of a backend of one device, are refused.
func TestDealErrors(t *testing.T) {
	gb, err := compute.New(compute.NameGo)
	if err != nil {
		t.Fatal(err)
	}
	defer gb.Close()
	dates := []float64{2020, 2020.5}
	plan, err := season.NewPlan(season.Model{Kind: season.Composite, Period: season.Period{From: 2019, To: 2021}}, dates)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(k int, _ *season.Job) (*season.Job, error) {
		return season.NewJob(plan, season.Cube{Dates: dates, Pixels: 3, Values: make([]float32, 6)}), nil
	}
	fm := &fakeMulti{count: 2, blockOf: map[*season.Job]int{}, fail: -1}
	bs, closeAll, err := season.Spread(&fakeDevice{Backend: gb, multi: fm}, 2)
	if err != nil || len(bs) != 2 {
		t.Fatalf("Spread: %d, %v", len(bs), err)
	}
	defer closeAll()
	bad := errors.New("disk full")
	sunk := 0
	_, err = season.Deal(context.Background(), bs, 50, mk, func(k int, j *season.Job) error {
		sunk++
		if k == 3 {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || sunk != 4 {
		t.Errorf("sink error: %v after %d blocks", err, sunk)
	}
	_, err = season.Deal(context.Background(), bs, 50, func(k int, j *season.Job) (*season.Job, error) {
		if k == 7 {
			return nil, bad
		}
		return mk(k, j)
	}, func(int, *season.Job) error { return nil })
	if !errors.Is(err, bad) {
		t.Errorf("build error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := season.Deal(ctx, bs, 50, mk, func(int, *season.Job) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, _, err := season.Spread(&fakeDevice{Backend: gb, multi: fm}, 3); err == nil {
		t.Error("3 devices of 2 were taken")
	}
	fb := &fakeMulti{count: 3, blockOf: map[*season.Job]int{}, fail: -1, broken: 2}
	if _, _, err := season.Spread(&fakeDevice{Backend: gb, multi: fb}, 0); err == nil || !strings.Contains(err.Error(), "device 2 cannot run: it is on fire") {
		t.Errorf("a device that cannot run: %v", err)
	} else if !fb.devs[0].closed {
		t.Error("the device opened before the broken one was not closed")
	}
	if _, _, err := season.Spread(gb, 2); err == nil {
		t.Error("2 devices of the go backend were taken")
	}
	if bs, _, err := season.Spread(gb, 0); err != nil || len(bs) != 1 {
		t.Errorf("the go backend alone: %d, %v", len(bs), err)
	}
}
