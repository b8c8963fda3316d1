package cudaback

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"canopy/compute"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

// On every GPU of the machine (CANOPY_EXPECT_GPU=1 makes a missing one a
// failure; CANOPY_EXPECT_DEVICES=N makes fewer than N devices one): the
// blocks of a cube dealt to one backend per device (season.Spread,
// season.Deal) give, bit for bit, the planes of one device over the
// whole cube, each device runs blocks, and a device that is not there is
// refused with the count.
func TestSeasonDevices(t *testing.T) {
	b := New()
	defer b.Close()
	if info := b.Info(); !info.Available {
		if os.Getenv("CANOPY_EXPECT_GPU") == "1" {
			t.Fatalf("no GPU: %s", info.Reason)
		}
		t.Skipf("no CUDA GPU: %s", info.Reason)
	}
	n, err := b.DeviceCount()
	if err != nil || n < 1 {
		t.Fatalf("DeviceCount: %d, %v", n, err)
	}
	if want, _ := strconv.Atoi(os.Getenv("CANOPY_EXPECT_DEVICES")); n < want {
		t.Fatalf("%d CUDA devices, CANOPY_EXPECT_DEVICES=%d", n, want)
	}
	if _, err := b.OnDevice(n); err == nil {
		t.Errorf("device %d of %d was opened", n, n)
	}
	spread, closeAll, err := season.Spread(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	if len(spread) != n {
		t.Fatalf("spread over %d backends, %d devices", len(spread), n)
	}
	ran := make([]int, n)
	var bs []compute.Backend
	for i, o := range spread {
		t.Logf("device %d: %s", i, o.Info().Device)
		bs = append(bs, countingRunner{o.(*Backend), &ran[i]})
	}
	const T, P, blocks = 48, 200_000, 17
	cube := seasontest.Cube(11, T, P, 2018, 2024, 2022, 0.3)
	for _, m := range seasontest.Models(2018, 2022, 2024) {
		plan, err := season.NewPlan(m, cube.Dates)
		if err != nil {
			t.Fatal(err)
		}
		whole := season.NewJob(plan, cube)
		if _, err := season.RunJob(b, whole); err != nil {
			t.Fatal(err)
		}
		span := func(k int) (int, int) { return k * P / blocks, (k + 1) * P / blocks }
		got := make([][]float32, len(whole.Out))
		_, err = season.Deal(context.Background(), bs, blocks, func(k int, _ *season.Job) (*season.Job, error) {
			a, z := span(k)
			c := season.Cube{Dates: cube.Dates, Pixels: z - a, Values: make([]float32, T*(z-a))}
			for d := range T {
				copy(c.Values[d*(z-a):], cube.Values[d*P+a:d*P+z])
			}
			return season.NewJob(plan, c), nil
		}, func(k int, j *season.Job) error {
			for i, o := range j.Out {
				got[i] = append(got[i], o...)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		for i := range got {
			for p, v := range got[i] {
				if w := whole.Out[i][p]; math.Float32bits(v) != math.Float32bits(w) {
					t.Fatalf("%s: plane %s pixel %d: %v dealt over %d devices, %v on one", m.Kind, m.Outputs()[i], p, v, n, w)
				}
			}
		}
		if _, err := seasontest.Check(whole, season.Ref(whole)); err != nil {
			t.Errorf("%s: %v", m.Kind, err)
		}
	}
	t.Logf("blocks run per device: %v", ran)
	for i, k := range ran {
		if k == 0 {
			t.Errorf("device %d ran no block", i)
		}
	}
}

// countingRunner counts the blocks a backend runs (each runner has one
// goroutine of season.Deal's).
type countingRunner struct {
	*Backend
	n *int
}

func (c countingRunner) RunSeries(j *season.Job) (compute.Timings, error) {
	*c.n++
	return c.Backend.RunSeries(j)
}
