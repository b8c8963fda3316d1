package colormap

import (
	"fmt"
	"image/color"
	"math"
)

// Palette layout shared by every paletted image of this package.
const (
	// IndexNaN is the palette index of NaN: fully transparent.
	IndexNaN = 0
	// RampSteps is the number of palette entries a continuous ramp uses,
	// indices 1..RampSteps.
	RampSteps = 239
	// grayBase is the first of 16 greys, white (grayBase) to black
	// (grayBase+15), used for legend text, ticks and backgrounds.
	grayBase   = 1 + RampSteps
	grayLevels = 16
	indexWhite = grayBase
	indexBlack = grayBase + grayLevels - 1
)

// lutSize is the number of colours of the on-screen table: finer than any
// screen can show over [-1, 1] (one step is 0.0005 NDVI).
const lutSize = 4096

// LUT maps NDVI values to colours for one ramp and stretch. It is immutable
// and safe for concurrent use.
type LUT struct {
	ramp   *ramp
	lo, hi float64
	// lo32 and scale32 map a value to a position in [0, lutSize).
	lo32, scale32 float32
	// rgba holds little-endian packed NRGBA: entry 0 is NaN (transparent),
	// entries 1..lutSize the ramp, or 1..len(classes) the classes.
	rgba []uint32
	// classes is the class table of a discrete LUT.
	classes ClassTable
	// cls is the class of each of lutSize equal steps of [clsLo, clsLo +
	// lutSize/clsScale) for a discrete LUT, or ambiguous where a step is
	// near a class bound.
	cls             []uint8
	clsLo, clsScale float32
	// pscale maps a value to a palette step in [0, RampSteps).
	pscale  float32
	palette color.Palette
	// heading heads the legend ("" is "NDVI"; WithHeading).
	heading string
}

// New returns the lookup table of the named ramp ("" for the default)
// stretched over [lo, hi]. For the classes ramp lo and hi are ignored: it
// draws the default NDVI classes (Classes), whose bounds are absolute
// values; NewClasses draws any class table.
func New(rampName string, lo, hi float64) (*LUT, error) {
	r, err := rampByName(rampName)
	if err != nil {
		return nil, err
	}
	if r.discrete {
		return newDiscrete(r, ndviTable), nil
	}
	if s := (Stretch{lo, hi}); !s.Valid() {
		return nil, fmt.Errorf("colour ramp %s: stretch [%g, %g] must be finite with low < high", r.name, lo, hi)
	}
	l := &LUT{ramp: r, lo: lo, hi: hi, lo32: float32(lo)}
	l.scale32 = float32(lutSize / (hi - lo))
	l.pscale = float32(RampSteps / (hi - lo))
	l.rgba = make([]uint32, 1+lutSize)
	for i := 1; i <= lutSize; i++ {
		l.rgba[i] = pack(r.at((float64(i) - 0.5) / lutSize))
	}
	l.palette = make(color.Palette, 256)
	for i := 1; i <= RampSteps; i++ {
		l.palette[i] = r.at((float64(i) - 0.5) / RampSteps)
	}
	l.finishPalette()
	return l, nil
}

// NewClasses returns the lookup table that draws t: each value in its
// class's colour, NaN transparent. Its Ramp is RampClasses, its legend
// lists t's classes and Classes returns t; the map, the legend and the
// statistics that take their colours from it therefore agree.
func NewClasses(t ClassTable) (*LUT, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	r, _ := rampByName(RampClasses)
	return newDiscrete(r, t.Clone()), nil
}

func pack(c color.NRGBA) uint32 {
	return uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | uint32(c.A)<<24
}

// newDiscrete builds the LUT of a valid class table. Its range is [-1, 1]
// (the range of normalised differences) when the thresholds lie in it,
// else their span opened by a quarter on each side.
func newDiscrete(r *ramp, t ClassTable) *LUT {
	th := t.Thresholds()
	lo, hi := -1.0, 1.0
	if len(th) > 0 && (th[0] < -1 || th[len(th)-1] > 1) {
		lo, hi = th[0], th[len(th)-1]
		pad := math.Max((hi-lo)/4, math.Max(math.Abs(lo), math.Abs(hi))*0.25+1e-3)
		lo, hi = lo-pad, hi+pad
	}
	l := &LUT{ramp: r, lo: lo, hi: hi, lo32: float32(lo), classes: t}
	l.rgba = make([]uint32, 1+len(t))
	l.palette = make(color.Palette, 256)
	for i := 1; i <= RampSteps; i++ {
		l.palette[i] = color.NRGBA{A: 0xff}
	}
	for i, c := range t {
		l.rgba[1+i] = pack(c.Color)
		l.palette[1+i] = c.Color
	}
	l.clsLo, l.clsScale = float32(lo), float32(lutSize/(hi-lo))
	l.cls = l.classSteps()
	l.finishPalette()
	return l
}

// finishPalette sets the NaN entry and the greys of the palette.
func (l *LUT) finishPalette() {
	l.palette[IndexNaN] = color.NRGBA{}
	for g := range grayLevels {
		v := uint8(255 - g*255/(grayLevels-1))
		l.palette[grayBase+g] = color.NRGBA{v, v, v, 0xff}
	}
}

// Classes returns the class table a discrete LUT draws (a copy), nil for
// a continuous ramp.
func (l *LUT) Classes() ClassTable {
	if l.classes == nil {
		return nil
	}
	return l.classes.Clone()
}

// Ramp returns the ramp's name.
func (l *LUT) Ramp() string { return l.ramp.name }

// Range returns the stretch the LUT spans; for classes [-1, 1], or the
// span of thresholds outside it opened by a quarter on each side.
func (l *LUT) Range() Stretch { return Stretch{l.lo, l.hi} }

// Discrete reports whether the LUT maps classes rather than a continuous
// ramp.
func (l *LUT) Discrete() bool { return l.ramp.discrete }

// ambiguous marks a step of the class table that needs ClassOf.
const ambiguous = 0xff

// classSteps tabulates the class of each of lutSize steps of the LUT's
// class range. A step that holds a class bound, and its neighbours
// (float32 rounding may put a value one step off), are marked ambiguous.
func (l *LUT) classSteps() []uint8 {
	cls := make([]uint8, lutSize)
	at := func(i int) int { return l.classes.ClassOf(l.clsLo + float32(i)/l.clsScale) }
	for i := range cls {
		cls[i] = uint8(at(i))
		if at(i+1) != at(i) || (i > 0 && at(i-1) != at(i)) || (i+2 <= lutSize && at(i+2) != at(i+1)) {
			cls[i] = ambiguous
		}
	}
	return cls
}

// class returns the class of v using the step table of a discrete LUT.
func (l *LUT) class(v float32) int {
	f := (v - l.clsLo) * l.clsScale
	if f >= 0 && f < lutSize {
		if c := l.cls[int(f)]; c != ambiguous {
			return int(c)
		}
	}
	return l.classes.ClassOf(v)
}

// entry returns the index into rgba of v: 0 for NaN.
func (l *LUT) entry(v float32) int {
	if l.ramp.discrete {
		return l.class(v) + 1
	}
	f := (v - l.lo32) * l.scale32
	if !(f >= 0) {
		if f != f {
			return 0
		}
		return 1
	}
	if f >= lutSize {
		return lutSize
	}
	return 1 + int(f)
}

// Color returns the colour of v: the ramp's colour (values outside the
// stretch take the nearer end's), the class colour for the classes ramp,
// and fully transparent for NaN.
func (l *LUT) Color(v float32) color.NRGBA {
	p := l.rgba[l.entry(v)]
	return color.NRGBA{uint8(p), uint8(p >> 8), uint8(p >> 16), uint8(p >> 24)}
}

// Index returns the palette index of v: IndexNaN for NaN, 1..RampSteps for
// a continuous ramp, 1..len(Classes()) for classes.
func (l *LUT) Index(v float32) uint8 {
	if l.ramp.discrete {
		return uint8(l.class(v) + 1)
	}
	f := (v - l.lo32) * l.pscale
	if f != f {
		return IndexNaN
	}
	return uint8(1 + int(max(0, min(f, RampSteps-1))))
}

// Palette returns the 256-colour palette of the LUT's paletted images
// (a copy): IndexNaN transparent, then the ramp, then 16 greys.
func (l *LUT) Palette() color.Palette {
	p := make(color.Palette, len(l.palette))
	copy(p, l.palette)
	return p
}
