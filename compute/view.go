package compute

import (
	"encoding/binary"
	"fmt"
	"math"

	"canopy/compute/par"
)

// viewRows is the number of screen rows a RenderView worker takes at a
// time.
const viewRows = 16

// RenderView draws the viewport v of the w×h plane into dst (v.Width ×
// v.Height NRGBA pixels, 4 bytes each, row after row): the CPU renderer
// every resident session is checked against, equal to the window's
// colormap.LUT.RenderView for the table colormap.LUT.Table gives.
//
// Screen pixel (sx, sy) shows image point (X0 + (sx+0.5)/Zoom, Y0 +
// (sy+0.5)/Zoom). Zoomed in (Zoom ≥ 1) it is the image pixel there.
// Zoomed out, it is the mean of s×s point samples spread evenly over the
// pixel's footprint (s = ViewSamples(Zoom)): sample (kx, ky) reads image
// pixel (floor(X0 + (sx + ViewSampleOffset(kx, s))/Zoom), floor(Y0 + (sy +
// ViewSampleOffset(ky, s))/Zoom)), computed in float64; samples outside
// the image and NaN samples are left out, the others summed in float32
// row by row, sample by sample, and divided by their count in float32.
// The value is coloured by Table.Entry. A screen pixel with no sample in
// the image, and every pixel of a view that is not Drawable, is 0 (fully
// transparent); one whose samples are all NaN takes RGBA[0].
func RenderView(dst []byte, plane []float32, w, h int, v View) error {
	if err := v.Check(); err != nil {
		return err
	}
	W, H := v.Width, v.Height
	if len(dst) < 4*W*H {
		return fmt.Errorf("view of %dx%d needs %d bytes, has %d", W, H, 4*W*H, len(dst))
	}
	if w <= 0 || h <= 0 || len(plane) < w*h {
		return fmt.Errorf("plane of %dx%d given %d values", w, h, len(plane))
	}
	dst = dst[:4*W*H]
	if !v.Drawable() {
		clear(dst)
		return nil
	}
	s := ViewSamples(v.Zoom)
	// xs[sx*s+k] is the image column of sample k of screen column sx, or
	// -1 outside the image.
	xs := make([]int32, W*s)
	for sx := range W {
		for k := range s {
			xs[sx*s+k] = sampleAt(v.X0, sx, k, s, v.Zoom, w)
		}
	}
	t := v.Table
	par.For((H+viewRows-1)/viewRows, func(c int) {
		var rows [MaxViewSamples]int
		for sy := c * viewRows; sy < min((c+1)*viewRows, H); sy++ {
			n := 0
			for k := range s {
				if y := sampleAt(v.Y0, sy, k, s, v.Zoom, h); y >= 0 {
					rows[n] = int(y) * w
					n++
				}
			}
			line := dst[4*W*sy : 4*W*(sy+1)]
			switch {
			case n == 0:
				clear(line)
			case s == 1:
				row := plane[rows[0] : rows[0]+w]
				for sx, ix := range xs {
					var p uint32
					if ix >= 0 {
						p = t.RGBA[t.Entry(row[ix])]
					}
					binary.LittleEndian.PutUint32(line[4*sx:], p)
				}
			default:
				for sx := range W {
					var sum float32
					cnt := 0
					for _, ro := range rows[:n] {
						for _, ix := range xs[sx*s : sx*s+s] {
							if ix < 0 {
								continue
							}
							if x := plane[ro+int(ix)]; x == x {
								sum += x
								cnt++
							}
						}
					}
					var p uint32
					switch {
					case cnt > 0:
						p = t.RGBA[t.Entry(sum/float32(cnt))]
					case hasSample(xs[sx*s : sx*s+s]):
						p = t.RGBA[0]
					}
					binary.LittleEndian.PutUint32(line[4*sx:], p)
				}
			}
		}
	})
	return nil
}

// ViewSampleAt is the image column (or row) that sample k of s of screen
// column (or row) sx reads in RenderView: floor(o + (sx +
// ViewSampleOffset(k, s))/zoom) in float64, or -1 outside [0, size). A
// GPU session that takes these from the host reads exactly RenderView's
// pixels, whatever its own float64 division does.
func ViewSampleAt(o float64, sx, k, s int, zoom float64, size int) int32 {
	return sampleAt(o, sx, k, s, zoom, size)
}

// sampleAt is the image column (or row) of sample k of s of screen column
// sx: floor(o + (sx + (k+0.5)/s)/zoom), or -1 outside [0, size).
func sampleAt(o float64, sx, k, s int, zoom float64, size int) int32 {
	u := math.Floor(o + (float64(sx)+ViewSampleOffset(k, s))/zoom)
	if u >= 0 && u < float64(size) {
		return int32(u)
	}
	return -1
}

func hasSample(xs []int32) bool {
	for _, x := range xs {
		if x >= 0 {
			return true
		}
	}
	return false
}
