package colormap

import (
	"encoding/binary"
	"fmt"
	"image"
	"math"

	"canopy/compute"
	"canopy/compute/par"
)

// maxSamples is the largest number of samples per axis RenderView takes
// for one screen pixel when zoomed out (3×3 = 9 samples): compute's view
// rule, ViewSamples.
const maxSamples = compute.MaxViewSamples

// rowChunk is the number of rows a render worker takes at a time.
const rowChunk = 16

// ViewPixel returns the image pixel that screen pixel (sx, sy) shows in a
// viewport whose top-left corner is image point (x0, y0) at zoom screen
// pixels per image pixel: (floor(x0 + (sx+0.5)/zoom), floor(y0 +
// (sy+0.5)/zoom)). It is RenderView's rule (its centre sample), for a
// cursor read-out; the result may lie outside the image.
func ViewPixel(sx, sy int, x0, y0, zoom float64) (ix, iy int) {
	return int(math.Floor(x0 + (float64(sx)+0.5)/zoom)), int(math.Floor(y0 + (float64(sy)+0.5)/zoom))
}

// RenderView fills dst with the viewport of the w×h NDVI plane whose
// top-left corner is image point (x0, y0), at zoom screen pixels per image
// pixel. Screen pixel (sx, sy), counted from dst.Rect.Min, shows image
// point (x0 + (sx+0.5)/zoom, y0 + (sy+0.5)/zoom): nearest neighbour when
// zoom ≥ 1; when zoom < 1 the mean of an s×s grid of samples spread evenly
// over the pixel's footprint (s = min(ceil(1/zoom), 3)), NaN samples left
// out, mapped through the LUT. Areas outside the image, NaN pixels and a
// zoom that is not a positive number are fully transparent.
//
// It runs on all threads, allocates only a column table per call and no
// memory per pixel. It panics if len(ndvi) < w*h, as slice indexing would.
func (l *LUT) RenderView(dst *image.NRGBA, ndvi []float32, w, h int, x0, y0, zoom float64) {
	if w < 0 || h < 0 || len(ndvi) < w*h {
		panic(fmt.Sprintf("colormap: RenderView of %dx%d plane given %d values", w, h, len(ndvi)))
	}
	W, H := dst.Rect.Dx(), dst.Rect.Dy()
	if W <= 0 || H <= 0 {
		return
	}
	if !(zoom > 0) || math.IsInf(zoom, 0) || math.IsNaN(x0) || math.IsNaN(y0) || w == 0 || h == 0 {
		clearRows(dst, 0, H)
		return
	}
	s := compute.ViewSamples(zoom)
	// xs[sx*s+k] is the image column of sample k of screen column sx, or -1.
	xs := make([]int32, W*s)
	for sx := range W {
		for k := range s {
			xs[sx*s+k] = compute.ViewSampleAt(x0, sx, k, s, zoom, w)
		}
	}
	// cols are the screen columns with a sample inside the image,
	// [cols[0], cols[3]), and among them those with all samples inside,
	// [cols[1], cols[2]); samples inside form one run of columns.
	cols := [4]int{W, W, W, W}
	for sx := range W {
		all, some := true, false
		for _, ix := range xs[sx*s : sx*s+s] {
			all = all && ix >= 0
			some = some || ix >= 0
		}
		if some {
			cols[0] = min(cols[0], sx)
			cols[3] = sx + 1
		}
		if all {
			cols[1] = min(cols[1], sx)
			cols[2] = sx + 1
		}
	}
	if cols[1] == W { // no column fully inside
		cols[1], cols[2] = cols[3], cols[3]
	}
	if cols[0] == W {
		cols[3] = W
	}
	par.For((H+rowChunk-1)/rowChunk, func(c int) {
		var rows [maxSamples]int
		y0c := c * rowChunk
		for sy := y0c; sy < min(y0c+rowChunk, H); sy++ {
			n := 0
			for k := range s {
				if v := compute.ViewSampleAt(y0, sy, k, s, zoom, h); v >= 0 {
					rows[n] = int(v) * w
					n++
				}
			}
			o := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+sy)
			line := dst.Pix[o : o+4*W]
			switch {
			case n == 0:
				clear(line)
			case s == 1:
				l.pointRow(line, ndvi[rows[0]:rows[0]+w], xs)
			default:
				l.meanRow(line, ndvi, w, rows[:n], xs, s, cols)
			}
		}
	})
}

func clearRows(dst *image.NRGBA, from, to int) {
	for sy := from; sy < to; sy++ {
		o := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+sy)
		clear(dst.Pix[o : o+4*dst.Rect.Dx()])
	}
}

// pointRow colours one screen row from one image row, one sample a pixel.
func (l *LUT) pointRow(line []uint8, row []float32, xs []int32) {
	line = line[:4*len(xs)]
	if l.ramp.discrete {
		for sx, ix := range xs {
			var p uint32
			if ix >= 0 {
				p = l.rgba[l.class(row[ix])+1]
			}
			binary.LittleEndian.PutUint32(line[4*sx:], p)
		}
		return
	}
	rgba := l.rgba[:lutSize+1]
	lo, scale := l.lo32, l.scale32
	for sx, ix := range xs {
		var p uint32
		if ix >= 0 {
			f := (row[ix] - lo) * scale
			switch {
			case f >= 0 && f < lutSize:
				p = rgba[1+int(f)]
			case f >= lutSize:
				p = rgba[lutSize]
			case f < 0:
				p = rgba[1]
			}
		}
		binary.LittleEndian.PutUint32(line[4*sx:], p)
	}
}

// meanRow colours one screen row with the mean of the finite samples of
// its pixels, s per axis; rows are the offsets of the image rows sampled
// (fewer than s at the image's top and bottom edges). cols are the column
// ranges RenderView found: outside [cols[0], cols[3]) no sample is in the
// image, inside [cols[1], cols[2]) all are.
func (l *LUT) meanRow(line []uint8, ndvi []float32, w int, rows []int, xs []int32, s int, cols [4]int) {
	W := len(xs) / s
	line = line[:4*W]
	pixel := func(sx int) {
		var sum float32
		n := 0
		for _, ro := range rows {
			for _, ix := range xs[sx*s : sx*s+s] {
				if ix < 0 {
					continue
				}
				if v := ndvi[ro+int(ix)]; v == v {
					sum += v
					n++
				}
			}
		}
		var p uint32
		if n > 0 {
			p = l.rgba[l.entry(sum/float32(n))]
		}
		binary.LittleEndian.PutUint32(line[4*sx:], p)
	}
	clear(line[:4*cols[0]])
	clear(line[4*cols[3]:])
	for sx := cols[0]; sx < cols[1]; sx++ {
		pixel(sx)
	}
	// All samples inside: no column test, and the common 2- and 3-sample
	// cases unrolled.
	switch {
	case len(rows) == 3 && s == 3:
		r0, r1, r2 := ndvi[rows[0]:rows[0]+w], ndvi[rows[1]:rows[1]+w], ndvi[rows[2]:rows[2]+w]
		for sx := cols[1]; sx < cols[2]; sx++ {
			x := xs[sx*3 : sx*3+3 : sx*3+3]
			a, b, c := x[0], x[1], x[2]
			l.putMean(line[4*sx:], r0[a], r0[b], r0[c], r1[a], r1[b], r1[c], r2[a], r2[b], r2[c])
		}
	case len(rows) == 2 && s == 2:
		r0, r1 := ndvi[rows[0]:rows[0]+w], ndvi[rows[1]:rows[1]+w]
		for sx := cols[1]; sx < cols[2]; sx++ {
			x := xs[sx*2 : sx*2+2 : sx*2+2]
			a, b := x[0], x[1]
			l.putMean(line[4*sx:], r0[a], r0[b], r1[a], r1[b])
		}
	default:
		for sx := cols[1]; sx < cols[2]; sx++ {
			pixel(sx)
		}
	}
	for sx := cols[2]; sx < cols[3]; sx++ {
		pixel(sx)
	}
}

// putMean writes the colour of the mean of the finite values in vs.
func (l *LUT) putMean(dst []uint8, vs ...float32) {
	var sum float32
	n := 0
	for _, v := range vs {
		if v == v {
			sum += v
			n++
		}
	}
	var p uint32
	if n > 0 {
		p = l.rgba[l.entry(sum/float32(n))]
	}
	binary.LittleEndian.PutUint32(dst, p)
}

// Image returns the full-resolution map of the w×h NDVI plane as a
// paletted image (1 byte per pixel) with the LUT's Palette: IndexNaN, fully
// transparent, where the value is NaN. It panics if len(ndvi) < w*h.
func (l *LUT) Image(ndvi []float32, w, h int) *image.Paletted {
	if w < 0 || h < 0 || len(ndvi) < w*h {
		panic(fmt.Sprintf("colormap: Image of %dx%d plane given %d values", w, h, len(ndvi)))
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), l.Palette())
	l.fillIndices(img.Pix, img.Stride, ndvi, w, h)
	return img
}

// Indices writes the palette index of each value of src (Index) into dst,
// which must be at least as long; it is the fast loop behind Image, for
// callers that quantise a plane themselves (statistics, tiles).
func (l *LUT) Indices(dst []uint8, src []float32) {
	dst = dst[:len(src)]
	if l.ramp.discrete {
		for x, v := range src {
			dst[x] = uint8(l.class(v) + 1)
		}
		return
	}
	lo, scale := l.lo32, l.pscale
	for x, v := range src {
		var i uint8 // IndexNaN
		if f := (v - lo) * scale; f == f {
			i = uint8(1 + int(max(0, min(f, RampSteps-1))))
		}
		dst[x] = i
	}
}

// fillIndices writes the palette indices of the w×h plane into pix, row y
// starting at y*stride, on all threads.
func (l *LUT) fillIndices(pix []uint8, stride int, ndvi []float32, w, h int) {
	par.For((h+rowChunk-1)/rowChunk, func(c int) {
		for y := c * rowChunk; y < min((c+1)*rowChunk, h); y++ {
			l.Indices(pix[y*stride:y*stride+w], ndvi[y*w:y*w+w])
		}
	})
}
