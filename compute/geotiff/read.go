package geotiff

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"canopy/compute"
)

// ReadBand decodes band b (1-based, as GDAL numbers bands) into a float32
// plane with the file's georeferencing and nodata, Source "name:b".
func (f *File) ReadBand(b int) (*compute.Band, error) {
	bs, err := f.ReadBands(b)
	if err != nil {
		return nil, err
	}
	return bs[0], nil
}

// ReadBands decodes several bands (1-based) in one pass over the file, so
// that bands of a pixel-interleaved file are decompressed once. Strips or
// tiles are decoded on all cores, each straight into the float32 planes.
func (f *File) ReadBands(bands ...int) ([]*compute.Band, error) {
	return f.ReadBandsInto(nil, bands...)
}

// ReadBandsInto is ReadBands decoding into planes the caller provides: band
// bands[i] is decoded into dst[i] when that is not nil, and the returned
// band's Data is that slice. A given plane must hold exactly Width*Height
// pixels; every one of them is written (sparse strips or tiles with the
// nodata value, or 0), so its previous contents do not matter. Nil entries,
// and all bands when dst is empty, are allocated as ReadBands allocates
// them; otherwise dst has one entry per band. Planes may not overlap, except
// that one plane may be given for a band listed twice. On error the planes'
// contents are unspecified.
func (f *File) ReadBandsInto(dst [][]float32, bands ...int) ([]*compute.Band, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("read %s: no band requested", f.name)
	}
	if f.r == nil {
		return nil, fmt.Errorf("read %s: file is closed", f.name)
	}
	for _, b := range bands {
		if b < 1 || b > f.spp {
			return nil, fmt.Errorf("read %s: band %d does not exist (the file has %d band%s)", f.name, b, f.spp, plural(f.spp))
		}
	}
	if len(dst) != 0 && len(dst) != len(bands) {
		return nil, fmt.Errorf("read %s: %d destination planes for %d bands", f.name, len(dst), len(bands))
	}
	for i, p := range dst {
		if p != nil && len(p) != f.width*f.height {
			return nil, fmt.Errorf("read %s: destination for band %d holds %d pixels, band is %dx%d", f.name, bands[i], len(p), f.width, f.height)
		}
	}
	if err := checkOverlap(dst, bands); err != nil {
		return nil, fmt.Errorf("read %s: %w", f.name, err)
	}
	out := make([]*compute.Band, len(bands))
	for i, b := range bands {
		var band *compute.Band
		if i < len(dst) && dst[i] != nil {
			band = &compute.Band{Width: f.width, Height: f.height, Data: dst[i]}
		} else {
			band = compute.NewBand(f.width, f.height)
		}
		band.Geo = f.geo
		band.NoData, band.HasNoData = f.nodata, f.hasNoData
		band.Source = fmt.Sprintf("%s:%d", f.name, b)
		out[i] = band
	}
	// Which chunks to decode and which bands each one feeds.
	type target struct {
		plane  []float32
		offset int // byte offset of the sample within a pixel
	}
	perPlane := f.across * f.down
	var jobs []int
	var targets [][]target // by plane index (planar) or one list (chunky)
	if f.planar {
		targets = make([][]target, f.spp)
		for i, b := range bands {
			if len(targets[b-1]) == 0 {
				for c := 0; c < perPlane; c++ {
					jobs = append(jobs, (b-1)*perPlane+c)
				}
			}
			targets[b-1] = append(targets[b-1], target{out[i].Data, 0})
		}
	} else {
		targets = make([][]target, 1)
		for i, b := range bands {
			targets[0] = append(targets[0], target{out[i].Data, (b - 1) * f.typ.Size()})
		}
		jobs = make([]int, perPlane)
		for c := range jobs {
			jobs[c] = c
		}
	}

	size := f.typ.Size()
	sppChunk := 1
	if !f.planar {
		sppChunk = f.spp
	}
	rowSamples := f.cw * sppChunk
	rowBytes := rowSamples * size
	pixBytes := sppChunk * size
	fileConv := converter(f.typ, f.be)
	leConv := converter(f.typ, false)

	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var zd *zstd.Decoder
	if f.comp == compZSTD {
		var err error
		zd, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(workers),
			zstd.WithDecoderMaxMemory(uint64(max(f.chunkNeed(0), 8<<20))), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.name, err)
		}
		defer zd.Close()
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		errMu  sync.Mutex
		first  error
		firstI = -1
		wg     sync.WaitGroup
	)
	what := "strip"
	if f.tiled {
		what = "tile"
	}
	fail := func(i int, err error) {
		errMu.Lock()
		if first == nil || i < firstI {
			first, firstI = err, i
		}
		errMu.Unlock()
		failed.Store(true)
	}
	fill := float32(0)
	if f.hasNoData {
		fill = float32(f.nodata)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := &decoder{comp: f.comp, zd: zd}
			var comp, buf, tmp []byte
			for !failed.Load() {
				j := int(next.Add(1)) - 1
				if j >= len(jobs) {
					return
				}
				ci := jobs[j]
				plane, c := 0, ci
				if f.planar {
					plane, c = ci/perPlane, ci%perPlane
				}
				x0, y0 := (c%f.across)*f.cw, (c/f.across)*f.ch
				vw, vh := min(f.cw, f.width-x0), min(f.ch, f.height-y0)
				tl := targets[0]
				if f.planar {
					tl = targets[plane]
				}
				n := f.counts[ci]
				if n == 0 {
					for _, t := range tl {
						for r := range vh {
							row := t.plane[(y0+r)*f.width+x0:][:vw]
							for k := range row {
								row[k] = fill
							}
						}
					}
					continue
				}
				need := f.chunkNeed(ci)
				if cap(buf) < need {
					buf = make([]byte, need)
				}
				buf = buf[:need]
				if f.comp == compNone {
					if err := f.readAt(buf, f.offsets[ci]); err != nil {
						fail(ci, fmt.Errorf("read %s: %s %d: %w", f.name, what, ci, err))
						return
					}
				} else {
					if uint64(cap(comp)) < n {
						comp = make([]byte, n)
					}
					comp = comp[:n]
					if err := f.readAt(comp, f.offsets[ci]); err != nil {
						fail(ci, fmt.Errorf("read %s: %s %d: %w", f.name, what, ci, err))
						return
					}
					if err := dec.decompress(buf, comp); err != nil {
						if errors.Is(err, errShort) {
							err = fmt.Errorf("%s data ends before the %s's %d bytes (corrupt or truncated)", compressionName(f.comp), what, need)
						} else {
							err = fmt.Errorf("%s data is corrupt: %w", compressionName(f.comp), err)
						}
						fail(ci, fmt.Errorf("read %s: %s %d: %w", f.name, what, ci, err))
						return
					}
				}
				conv := fileConv
				switch f.pred {
				case 2:
					undoHorizontal(buf, rowSamples, sppChunk, size, f.be)
				case 3:
					if cap(tmp) < rowBytes {
						tmp = make([]byte, rowBytes)
					}
					undoFloatPredictor(buf, tmp, rowSamples, sppChunk, size)
					conv = leConv
				}
				for _, t := range tl {
					for r := range vh {
						conv(t.plane[(y0+r)*f.width+x0:][:vw], buf[r*rowBytes+t.offset:], pixBytes)
					}
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// checkOverlap refuses destination planes that share memory, which would
// make the workers race and leave one band's pixels in another's plane. The
// same plane given for the same band twice is allowed: both receive the
// same pixels from the same worker.
func checkOverlap(dst [][]float32, bands []int) error {
	type span struct {
		lo, hi uintptr
		band   int
	}
	var spans []span
	for i, p := range dst {
		if len(p) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		spans = append(spans, span{lo, lo + uintptr(len(p))*4, bands[i]})
	}
	if len(spans) < 2 {
		return nil
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		a, b := spans[i-1], spans[i]
		if b.lo == a.lo && b.hi == a.hi && b.band == a.band {
			continue
		}
		if b.lo < a.hi {
			return fmt.Errorf("the destination planes of bands %d and %d overlap", a.band, b.band)
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
