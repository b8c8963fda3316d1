package composite

import (
	"image"
	"image/color"
	"math"
	"sync"

	"canopy/compute"
	"canopy/compute/par"
)

// maxSamples is the largest number of samples per axis RenderView takes
// for one screen pixel when zoomed out (3×3): compute's view rule,
// ViewSamples, as colormap's RenderView.
const maxSamples = compute.MaxViewSamples

// rowChunk is the number of screen rows a render worker takes at a time.
const rowChunk = 16

var nan32 = float32(math.NaN())

// gather writes the reflectance of the pixels at columns xs of the image
// row starting at off into dst (NaN for a column outside the image, -1,
// and for nodata or NaN).
func (ch *channel) gather(dst []float32, off int, xs []int32) {
	p := ch.band.Plane
	dst = dst[:len(xs)]
	w := p.Width
	if t := ch.table; t != nil {
		// The table is indexed by a 16-bit value: no bounds check.
		switch p.Type {
		case compute.U8:
			row := p.U8()[off : off+w]
			for k, ix := range xs {
				if ix < 0 {
					dst[k] = nan32
				} else {
					dst[k] = t[row[ix]]
				}
			}
		case compute.U16:
			row := p.U16()[off : off+w]
			for k, ix := range xs {
				if ix < 0 {
					dst[k] = nan32
				} else {
					dst[k] = t[row[ix]]
				}
			}
		case compute.I16:
			row := p.I16()[off : off+w]
			for k, ix := range xs {
				if ix < 0 {
					dst[k] = nan32
				} else {
					dst[k] = t[uint16(row[ix])^0x8000]
				}
			}
		}
		return
	}
	nd, has := ch.band.NoData, ch.band.HasNoData
	conv := func(v float64) float32 {
		if v != v || has && v == nd {
			return nan32
		}
		return float32((v+ch.a)*ch.s + ch.o)
	}
	switch p.Type {
	case compute.U32:
		s := p.U32()
		for k, ix := range xs {
			if ix < 0 {
				dst[k] = nan32
			} else {
				dst[k] = conv(float64(s[off+int(ix)]))
			}
		}
	case compute.I32:
		s := p.I32()
		for k, ix := range xs {
			if ix < 0 {
				dst[k] = nan32
			} else {
				dst[k] = conv(float64(s[off+int(ix)]))
			}
		}
	case compute.F32:
		s := p.F32()
		for k, ix := range xs {
			if ix < 0 {
				dst[k] = nan32
			} else {
				dst[k] = conv(float64(s[off+int(ix)]))
			}
		}
	}
}

// stretch maps a reflectance to 0 … 255 (v must not be NaN).
func (ch *channel) stretch(v float32) uint8 {
	f := (v-ch.lo32)*ch.scale + 0.5
	switch {
	case f <= 0:
		return 0
	case f >= 255:
		return 255
	}
	return uint8(f)
}

// rowBuffers are a render worker's samples of one screen row.
type rowBuffers struct{ v [3][]float32 }

var buffers sync.Pool

func getBuffers(n int) *rowBuffers {
	b, _ := buffers.Get().(*rowBuffers)
	if b == nil {
		b = &rowBuffers{}
	}
	for c := range b.v {
		if cap(b.v[c]) < n {
			b.v[c] = make([]float32, n)
		}
		b.v[c] = b.v[c][:n]
	}
	return b
}

// RenderView fills dst with the viewport of the composite whose top-left
// corner is image point (x0, y0), at zoom screen pixels per image pixel,
// by colormap.RenderView's rules: screen pixel (sx, sy), counted from
// dst.Rect.Min, shows image point (x0 + (sx+0.5)/zoom, y0 + (sy+0.5)/zoom),
// nearest neighbour when zoom ≥ 1; when zoom < 1, each channel is the mean
// reflectance of the valid samples of an s×s grid over the pixel's
// footprint (s = min(ceil(1/zoom), 3)). Areas outside the image, pixels
// with no valid sample and a zoom that is not a positive number are
// transparent. It runs on all cores.
func (c *Composite) RenderView(dst *image.NRGBA, x0, y0, zoom float64) {
	W, H := dst.Rect.Dx(), dst.Rect.Dy()
	if W <= 0 || H <= 0 {
		return
	}
	if !(zoom > 0) || math.IsInf(zoom, 0) || math.IsNaN(x0) || math.IsNaN(y0) || c.w == 0 || c.h == 0 {
		for sy := range H {
			o := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+sy)
			clear(dst.Pix[o : o+4*W])
		}
		return
	}
	s := compute.ViewSamples(zoom)
	xs := make([]int32, W*s)
	for sx := range W {
		for k := range s {
			xs[sx*s+k] = compute.ViewSampleAt(x0, sx, k, s, zoom, c.w)
		}
	}
	par.For((H+rowChunk-1)/rowChunk, func(ci int) {
		buf := getBuffers(maxSamples * W * s)
		defer buffers.Put(buf)
		for sy := ci * rowChunk; sy < min((ci+1)*rowChunk, H); sy++ {
			o := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+sy)
			c.renderRow(dst.Pix[o:o+4*W], buf, xs, s, y0, zoom, sy)
		}
	})
}

// renderRow draws screen row sy into line.
func (c *Composite) renderRow(line []uint8, buf *rowBuffers, xs []int32, s int, y0, zoom float64, sy int) {
	W := len(xs) / s
	n := 0 // image rows sampled
	for k := range s {
		v := compute.ViewSampleAt(y0, sy, k, s, zoom, c.h)
		if v < 0 {
			continue
		}
		off := int(v) * c.w
		seg := n * len(xs)
		for ci := range c.ch {
			c.ch[ci].gather(buf.v[ci][seg:seg+len(xs)], off, xs)
		}
		if c.mask != nil {
			v0 := buf.v[0][seg : seg+len(xs)]
			for j, ix := range xs {
				if ix >= 0 && c.mask[off+int(ix)] != 0 {
					v0[j] = nan32
				}
			}
		}
		n++
	}
	if n == 0 {
		clear(line)
		return
	}
	r, g, b := buf.v[0], buf.v[1], buf.v[2]
	if s == 1 {
		for sx := range W {
			vr, vg, vb := r[sx], g[sx], b[sx]
			if vr != vr || vg != vg || vb != vb {
				clear(line[4*sx : 4*sx+4])
				continue
			}
			line[4*sx] = c.ch[0].stretch(vr)
			line[4*sx+1] = c.ch[1].stretch(vg)
			line[4*sx+2] = c.ch[2].stretch(vb)
			line[4*sx+3] = 0xff
		}
		return
	}
	for sx := range W {
		var sr, sg, sb float32
		m := 0
		for k := range n {
			base := k*len(xs) + sx*s
			for j := base; j < base+s; j++ {
				vr, vg, vb := r[j], g[j], b[j]
				if vr != vr || vg != vg || vb != vb {
					continue
				}
				sr, sg, sb = sr+vr, sg+vg, sb+vb
				m++
			}
		}
		if m == 0 {
			clear(line[4*sx : 4*sx+4])
			continue
		}
		f := 1 / float32(m)
		line[4*sx] = c.ch[0].stretch(sr * f)
		line[4*sx+1] = c.ch[1].stretch(sg * f)
		line[4*sx+2] = c.ch[2].stretch(sb * f)
		line[4*sx+3] = 0xff
	}
}

// Image is the composite at full resolution as an image that draws its
// rows as they are read (for an encoder that reads row by row, such as
// image/png's), so a 10980² composite is written without holding its 482
// MB picture. Reading it from several goroutines at once is not safe.
func (c *Composite) Image() image.Image {
	return &rowImage{c: c, row: image.NewNRGBA(image.Rect(0, 0, c.w, 1)), y: -1}
}

// rowImage is Image's picture: one row drawn at a time.
type rowImage struct {
	c   *Composite
	row *image.NRGBA
	y   int
}

func (m *rowImage) ColorModel() color.Model { return color.NRGBAModel }
func (m *rowImage) Bounds() image.Rectangle { return image.Rect(0, 0, m.c.w, m.c.h) }

// At is the colour of pixel (x, y).
func (m *rowImage) At(x, y int) color.Color { return m.NRGBAAt(x, y) }

// NRGBAAt is the colour of pixel (x, y), drawing its row if it is not the
// last one drawn.
func (m *rowImage) NRGBAAt(x, y int) color.NRGBA {
	if x < 0 || y < 0 || x >= m.c.w || y >= m.c.h {
		return color.NRGBA{}
	}
	if y != m.y {
		m.c.RenderView(m.row, 0, float64(y), 1)
		m.y = y
	}
	return m.row.NRGBAAt(x, 0)
}

// Opaque reports false: the encoder then keeps the alpha channel without
// a pass of its own over every pixel.
func (m *rowImage) Opaque() bool { return false }
