package geotiff

import (
	"errors"
	"fmt"
	"math"

	"canopy/compute"
	"canopy/compute/par"
)

// Stored is one band's chunks (tiles or strips) as the file stores them,
// for a device that inflates them itself (compute/cudaback): raw DEFLATE
// streams, each chunk's zlib header checked and passed over, read in
// one pass without decoding. Chunk c covers pixels (c mod Across)·ChunkW,
// (c div Across)·ChunkH of the band; it decodes to Cap[c] bytes (rows of
// ChunkW samples of Type, Predictor 2's horizontal differencing still in
// them), of which the first Need[c] hold the rows the image shows.
type Stored struct {
	// Data holds the chunks' bytes one after another and Pad zero bytes
	// after the last; chunk c's DEFLATE stream is Data[Spans[2c]:Spans[2c+1]].
	Data  []byte
	Spans []int64
	Cap   []int32
	Need  []int32

	Type                   compute.DataType
	Width, Height          int // the band's
	ChunkW, ChunkH, Across int
	Predictor              int // 1: none, 2: horizontal differencing

	file *File
	band int
}

// Pad is the zero bytes after Data's last stream: room for a reader that
// loads a few bytes at a time past a stream's end.
const Pad = 16

// Chunks is the number of chunks.
func (s *Stored) Chunks() int { return len(s.Cap) }

// Decode decodes the band on the host into p (its type and size), as
// ReadRowsInto does: for a device that could not inflate a chunk, so that
// the result, or the error, is the host reader's. The File must still be
// open.
func (s *Stored) Decode(p compute.Plane) error {
	return s.file.ReadRowsInto(s.band, 0, s.Height, p)
}

// ReadStored reads band b's (1-based) chunks as stored. It returns nil and
// no error when the band is not stored in a way a device inflates: a
// compression other than DEFLATE, a predictor other than none or
// horizontal differencing, samples of other than 1, 2 or 4 bytes, wider
// samples in big-endian order, chunks that hold several bands, a sparse or
// shared chunk (the chunks' bytes add up to more than the file), or a
// chunk that is not a zlib stream; the caller then decodes it on the host
// (ReadRowsInto), which says what is wrong, if anything. The File must
// stay open while the Stored is used (Decode reads from it).
func (f *File) ReadStored(b int) (*Stored, error) {
	if b < 1 || b > f.spp {
		return nil, fmt.Errorf("%s: no band %d (the file has %d)", f.name, b, f.spp)
	}
	t, exact := f.DataType()
	size := f.typ.Size()
	switch {
	case !exact, f.comp != compDeflate && f.comp != compAdobeDflt, f.pred != 1 && f.pred != 2,
		size != 1 && size != 2 && size != 4, f.be && size > 1, f.spp > 1 && !f.planar:
		return nil, nil
	}
	per := f.across * f.down
	first := (b - 1) * per // planar: the band's chunks follow the bands before
	if first+per > len(f.offsets) {
		return nil, nil
	}
	var total uint64
	for c := first; c < first+per; c++ {
		n := f.counts[c]
		if n < 2 {
			return nil, nil
		}
		total += n
		if total > uint64(f.size) {
			return nil, nil // shared or overlapping chunks: the host decodes each once
		}
		if f.chunkNeed(c) > math.MaxInt32 {
			return nil, nil
		}
	}
	s := &Stored{
		Data: make([]byte, total+Pad), Spans: make([]int64, 2*per), Cap: make([]int32, per), Need: make([]int32, per),
		Type: t, Width: f.width, Height: f.height, ChunkW: f.cw, ChunkH: f.ch, Across: f.across, Predictor: f.pred,
		file: f, band: b,
	}
	at := make([]int64, per+1)
	for k := range per {
		c := first + k
		at[k+1] = at[k] + int64(f.counts[c])
		s.Spans[2*k], s.Spans[2*k+1] = at[k]+2, at[k+1]
		s.Cap[k] = int32(f.chunkNeed(c))
		s.Need[k] = int32(f.decodeBytes(c))
	}
	// The chunks read on every core, a run of them a task.
	errs := make([]error, per)
	par.Blocks(per, 8, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			z := s.Data[at[k]:at[k+1]]
			if err := f.readAt(z, f.offsets[first+k]); err != nil {
				errs[k] = fmt.Errorf("%s: %s %d: %w", f.name, f.chunkWord(), first+k, err)
				return
			}
			if !zlibPlain(z) {
				errs[k] = errNotZlib
				return
			}
		}
	})
	for _, err := range errs {
		if err == errNotZlib {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// errNotZlib marks a chunk that is not a zlib stream (ReadStored).
var errNotZlib = errors.New("not a zlib stream")
