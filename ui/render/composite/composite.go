// Package composite draws colour composites of three bands: natural colour
// (red, green, blue) and false colour (NIR, red, green), the views a
// forester looks at beside an index map for context.
//
// Each channel is a band as the engine holds it (compute.BandInput: its
// stored samples, radiometry and nodata), stretched linearly between two
// percentiles of its reflectance over the valid pixels (2 and 98 by
// default, the cumulative count cut QGIS applies to a multi-band raster).
// A pixel is valid where no channel is nodata or NaN and the mask does not
// mark it; invalid pixels are transparent. The percentiles are exact, with
// NumPy's default ("linear") definition, and are read from histograms of
// the stored values (one pass for 8- and 16-bit bands, two for 32-bit
// ones), so no copy of a band is made. Rendering follows colormap's
// RenderView: only the viewport, at screen resolution, on all cores
// (compute/par).
//
// The package does not import Fyne: the window, the layouts and the tests
// draw through it alike.
package composite

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"canopy/compute"
)

// Stretch bounds of the default cumulative cut, in percent.
const (
	DefaultLo = 2
	DefaultHi = 98
)

// Options say how a composite is stretched and named.
type Options struct {
	// Lo and Hi are the percentiles (0 ≤ Lo < Hi ≤ 100) a channel is
	// stretched between; both 0 means DefaultLo and DefaultHi.
	Lo, Hi float64
	// Title names the composite ("Natural colour").
	Title string
	// Names are the bands' names in the product, red, green and blue
	// channel ("B04", "B03", "B02"); empty ones are the bands' roles.
	Names [3]string
}

// Channel is one channel's stretch: the band's name, its role and the
// reflectance range mapped to 0 … 255.
type Channel struct {
	Name, Role string
	Lo, Hi     float64
}

// Composite is three bands on one grid, stretched for display. It is
// immutable once made and safe for concurrent use; it refers to the bands'
// samples and the mask, which must not change while it lives.
type Composite struct {
	w, h  int
	title string
	pLo   float64
	pHi   float64
	mask  []uint8
	ch    [3]channel
	valid int
}

// channel is a band ready to draw: its stretch, and for 8- and 16-bit
// bands a table from the stored value (as a 16-bit key) to reflectance.
type channel struct {
	Channel
	band  compute.BandInput
	table *[1 << 16]float32 // key16 → reflectance, NaN for nodata (nil: computed)
	lo32  float32
	scale float32 // 255 / (Hi - Lo)
	a, s  float64 // radiometry for 32-bit bands: (v + a) * s + o
	o     float64
}

// New makes the composite of bands (the red, green and blue channel, in
// that order) with mask (nil, or 1 where a pixel is not to be used, one
// byte a pixel). The bands must have the same size; a band of an unknown
// type, or a mask of another size, is an error.
func New(bands [3]compute.BandInput, mask []uint8, opt Options) (*Composite, error) {
	if opt.Lo == 0 && opt.Hi == 0 {
		opt.Lo, opt.Hi = DefaultLo, DefaultHi
	}
	if !(opt.Lo >= 0 && opt.Lo < opt.Hi && opt.Hi <= 100) {
		return nil, fmt.Errorf("composite: stretch %g–%g %%: use 0 ≤ low < high ≤ 100", opt.Lo, opt.Hi)
	}
	w, h := bands[0].Plane.Width, bands[0].Plane.Height
	for i, b := range bands {
		if err := b.Plane.Check(); err != nil {
			return nil, fmt.Errorf("composite: %s band %s: %w", channelNames[i], b.Source, err)
		}
		if b.Plane.Width != w || b.Plane.Height != h {
			return nil, fmt.Errorf("composite: the %s band is %d×%d, the red band %d×%d", channelNames[i], b.Plane.Width, b.Plane.Height, w, h)
		}
		if !(b.Radiometry.Scale != 0) || math.IsInf(b.Radiometry.Scale, 0) {
			return nil, fmt.Errorf("composite: %s band %s has scale %g", channelNames[i], b.Source, b.Radiometry.Scale)
		}
	}
	if mask != nil && len(mask) != w*h {
		return nil, fmt.Errorf("composite: a mask of %d pixels for %d×%d bands", len(mask), w, h)
	}
	c := &Composite{w: w, h: h, title: opt.Title, pLo: opt.Lo, pHi: opt.Hi, mask: mask}
	for i, b := range bands {
		name := opt.Names[i]
		if name == "" {
			name = b.Role
		}
		ch := &c.ch[i]
		ch.Name, ch.Role, ch.band = name, b.Role, b
		r := b.Radiometry
		ch.a, ch.s, ch.o = r.Add, r.Scale, r.Offset
		if b.Plane.Type.Size() <= 2 {
			ch.table = valueTable(b)
		}
	}
	bounds, n := percentiles(bands, mask, opt.Lo/100, opt.Hi/100)
	c.valid = n
	for i := range c.ch {
		ch := &c.ch[i]
		lo, hi := bounds[i][0], bounds[i][1]
		if n == 0 {
			lo, hi = 0, 1
		}
		if !(hi > lo) {
			// A constant channel: open the range so it shows mid-grey.
			d := math.Max(1e-6, math.Abs(lo)*1e-3)
			lo, hi = lo-d, hi+d
		}
		ch.Lo, ch.Hi = lo, hi
		ch.lo32 = float32(lo)
		ch.scale = float32(255 / (hi - lo))
	}
	return c, nil
}

var channelNames = [3]string{"red", "green", "blue"}

// valueTable maps each 16-bit key of an 8- or 16-bit band to its
// reflectance, NaN for the nodata value.
func valueTable(b compute.BandInput) *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for k := range t {
		v, ok := storedOf(b.Plane.Type, uint32(k)<<16)
		if !ok || b.HasNoData && v == b.NoData {
			t[k] = float32(math.NaN())
			continue
		}
		t[k] = float32(b.Radiometry.Apply64(v))
	}
	return t
}

// Size is the composite's size in pixels.
func (c *Composite) Size() (w, h int) { return c.w, c.h }

// Title is the composite's name ("Natural colour").
func (c *Composite) Title() string { return c.title }

// Channels are the red, green and blue channel's bands and stretches.
func (c *Composite) Channels() [3]Channel {
	return [3]Channel{c.ch[0].Channel, c.ch[1].Channel, c.ch[2].Channel}
}

// Percentiles are the stretch's low and high percentiles.
func (c *Composite) Percentiles() (lo, hi float64) { return c.pLo, c.pHi }

// ValidPixels is the number of pixels the stretch was read from.
func (c *Composite) ValidPixels() int { return c.valid }

// Describe is the band combination in one line: "R=B04 G=B03 B=B02, 2–98 %
// stretch".
func (c *Composite) Describe() string {
	return fmt.Sprintf("R=%s G=%s B=%s, %s–%s %% stretch", c.ch[0].Name, c.ch[1].Name, c.ch[2].Name, num(c.pLo), num(c.pHi))
}

// Legend is the legend's lines: the title, one line a channel with its
// band and reflectance range ("R  B04 (red)  0.0213 – 0.118"), and the
// stretch.
func (c *Composite) Legend() []string {
	var out []string
	if c.title != "" {
		out = append(out, c.title)
	}
	for i, ch := range c.ch {
		name := ch.Name
		if ch.Role != "" && ch.Role != ch.Name {
			name += " (" + ch.Role + ")"
		}
		out = append(out, fmt.Sprintf("%s  %s  %s – %s", "RGB"[i:i+1], name, refl(ch.Lo), refl(ch.Hi)))
	}
	return append(out, fmt.Sprintf("linear %s–%s %% stretch of the valid pixels", num(c.pLo), num(c.pHi)))
}

// ChannelColors are the colours the legend marks the channels with.
var ChannelColors = [3]color.NRGBA{{0xe0, 0x20, 0x20, 0xff}, {0x20, 0xa0, 0x20, 0xff}, {0x20, 0x40, 0xe0, 0xff}}

func num(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", v), ".0") }

func refl(v float64) string { return strings.Replace(fmt.Sprintf("%.3g", v), "-", "−", 1) }

// Byte is the stretched value of reflectance v on a channel stretched over
// [lo, hi]: round(255·(v − lo)/(hi − lo)), clamped to 0 … 255. It is the
// rule RenderView draws by (in float32), for tests and callers that
// colour a single value.
func Byte(v, lo, hi float64) uint8 {
	f := 255*(v-lo)/(hi-lo) + 0.5
	switch {
	case f <= 0 || f != f:
		return 0
	case f >= 255:
		return 255
	}
	return uint8(f)
}

// Color is the colour of pixel (col, row) at full resolution: transparent
// where the pixel is not valid or outside the composite.
func (c *Composite) Color(col, row int) color.NRGBA {
	if col < 0 || row < 0 || col >= c.w || row >= c.h {
		return color.NRGBA{}
	}
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	c.RenderView(img, float64(col), float64(row), 1)
	return img.NRGBAAt(0, 0)
}
