package par

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestForVisitsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		seen := make([]atomic.Int32, n)
		For(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}

// Each runs every item at once: n items that each wait for all the
// others finish only if none waits for a free worker.
func TestEachRunsEveryItemAtOnce(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4 * Workers(1<<20)} {
		var arrived sync.WaitGroup
		arrived.Add(n)
		seen := make([]atomic.Int32, n)
		Each(n, func(i int) {
			seen[i].Add(1)
			arrived.Done()
			arrived.Wait()
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
}

func TestSplitsCover(t *testing.T) {
	for _, n := range []int{1, 15, 16, 17, 1 << 20, 1<<20 + 3} {
		for _, parts := range []int{1, 3, 16} {
			s := Split(n, parts, 16)
			if s[0][0] != 0 || s[len(s)-1][1] != n || len(s) > parts {
				t.Fatalf("Split(%d, %d) = %v", n, parts, s)
			}
			for i := 1; i < len(s); i++ {
				if s[i][0] != s[i-1][1] || s[i][0]%16 != 0 {
					t.Fatalf("Split(%d, %d): gap or misaligned at %d: %v", n, parts, i, s)
				}
			}
		}
	}
}

type fill struct{ out []int32 }

func (f *fill) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		f.out[i]++
	}
}

func TestPoolRunCoversOnceAndAllocatesNothing(t *testing.T) {
	p := NewPool(4)
	defer p.Close()
	for _, n := range []int{0, 5, MinParallel - 1, MinParallel + 17, 1 << 20} {
		f := &fill{out: make([]int32, n)}
		p.Run(n, f)
		if i := slices.IndexFunc(f.out, func(v int32) bool { return v != 1 }); i >= 0 {
			t.Fatalf("n=%d: element %d written %d times", n, i, f.out[i])
		}
	}
	f := &fill{out: make([]int32, 1<<20)}
	if a := testing.AllocsPerRun(10, func() { p.Run(len(f.out), f) }); a != 0 {
		t.Fatalf("Pool.Run allocates %v times", a)
	}
}

func TestCopyAndRanges(t *testing.T) {
	src := make([]float32, 3*CopyPiece/4+5)
	for i := range src {
		src[i] = float32(i)
	}
	dst := make([]float32, len(src))
	Copy(dst, src, 3, nil)
	if !slices.Equal(dst, src) {
		t.Fatal("Copy differs")
	}
	var sum atomic.Int64
	parts := Ranges(len(src), 1, func(_, lo, hi int) { sum.Add(int64(hi - lo)) })
	if sum.Load() != int64(len(src)) || parts < 1 {
		t.Fatalf("Ranges covered %d of %d in %d parts", sum.Load(), len(src), parts)
	}
	var blocks atomic.Int64
	WorkerBlocks(len(src), 1000, func(_, lo, hi int) { blocks.Add(int64(hi - lo)) })
	if blocks.Load() != int64(len(src)) {
		t.Fatalf("WorkerBlocks covered %d of %d", blocks.Load(), len(src))
	}
}
