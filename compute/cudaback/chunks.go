package cudaback

import "canopy/compute"

// chunk is a range of pixels [lo, hi).
type chunk struct{ lo, hi int }

// plan cuts n pixels into the overlapped pipeline's chunks. Sizes double
// from first up to max and halve again towards the end: the first download
// can start after a small upload and the last one, which nothing overlaps,
// is small, while the middle chunks are big enough that the copy engines'
// cost per transfer (some microseconds) stays a small part of the time.
// Every chunk but the last starts and ends on a multiple of ChunkAlign.
// With max 0 the image is one chunk (sequential mode).
func plan(n, first, max int) []chunk {
	if max <= 0 || n <= first {
		return []chunk{{0, n}}
	}
	units := (n + ChunkAlign - 1) / ChunkAlign
	size, top := first/ChunkAlign, max/ChunkAlign
	var front, back []int // sizes in units, back in reverse order
	for left := units; left > 0; {
		if left <= 2*size {
			if left <= size {
				front = append(front, left)
			} else {
				half := (left + 1) / 2
				front = append(front, half)
				back = append(back, left-half)
			}
			break
		}
		front = append(front, size)
		back = append(back, size)
		left -= 2 * size
		size = min(2*size, top)
	}
	cs := make([]chunk, 0, len(front)+len(back))
	lo := 0
	add := func(u int) {
		hi := lo + u*ChunkAlign
		cs = append(cs, chunk{lo, min(hi, n)})
		lo = hi
	}
	for _, u := range front {
		add(u)
	}
	for i := len(back) - 1; i >= 0; i-- {
		add(back[i])
	}
	return cs
}

// phases reads the event times of k chunks: upload and download are the
// spans from the first chunk's start to the latest end, kernel the sum of
// the chunks' kernels. With one chunk they are three consecutive intervals.
func (s *state) phases(k int, t *compute.Timings) error {
	first := s.events[0]
	for i := range k {
		ev := s.events[i]
		up, err := s.drv.EventElapsed(first[0], ev[1])
		if err != nil {
			return err
		}
		kern, err := s.drv.EventElapsed(ev[1], ev[2])
		if err != nil {
			return err
		}
		down, err := s.drv.EventElapsed(first[2], ev[3])
		if err != nil {
			return err
		}
		t.Upload = max(t.Upload, up)
		t.Kernel += kern
		t.Download = max(t.Download, down)
	}
	return nil
}
