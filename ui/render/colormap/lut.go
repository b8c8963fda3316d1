package colormap

import (
	"fmt"
	"image/color"
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
	// entries 1..lutSize the ramp, or 1..len(classTable) the classes.
	rgba []uint32
	// cls is the class of each of lutSize equal steps of [-1, 1] for the
	// classes ramp, or ambiguous where a step is near a class bound.
	cls []uint8
	// pscale maps a value to a palette step in [0, RampSteps).
	pscale  float32
	palette color.Palette
	// heading heads the legend ("" is "NDVI"; WithHeading).
	heading string
}

// New returns the lookup table of the named ramp ("" for the default)
// stretched over [lo, hi]. For the classes ramp lo and hi are ignored: the
// class bounds are absolute NDVI values.
func New(rampName string, lo, hi float64) (*LUT, error) {
	r, err := rampByName(rampName)
	if err != nil {
		return nil, err
	}
	if r.discrete {
		lo, hi = -1, 1
	} else if s := (Stretch{lo, hi}); !s.Valid() {
		return nil, fmt.Errorf("colour ramp %s: stretch [%g, %g] must be finite with low < high", r.name, lo, hi)
	}
	l := &LUT{ramp: r, lo: lo, hi: hi, lo32: float32(lo)}
	l.scale32 = float32(lutSize / (hi - lo))
	l.pscale = float32(RampSteps / (hi - lo))
	pack := func(c color.NRGBA) uint32 {
		return uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | uint32(c.A)<<24
	}
	if r.discrete {
		l.rgba = make([]uint32, 1+len(classTable))
		for i, c := range classTable {
			l.rgba[1+i] = pack(c.Color)
		}
		l.cls = classSteps()
	} else {
		l.rgba = make([]uint32, 1+lutSize)
		for i := 1; i <= lutSize; i++ {
			l.rgba[i] = pack(r.at((float64(i) - 0.5) / lutSize))
		}
	}
	l.palette = make(color.Palette, 256)
	l.palette[IndexNaN] = color.NRGBA{}
	for i := 1; i <= RampSteps; i++ {
		switch {
		case !r.discrete:
			l.palette[i] = r.at((float64(i) - 0.5) / RampSteps)
		case i <= len(classTable):
			l.palette[i] = classTable[i-1].Color
		default:
			l.palette[i] = color.NRGBA{A: 0xff}
		}
	}
	for g := range grayLevels {
		v := uint8(255 - g*255/(grayLevels-1))
		l.palette[grayBase+g] = color.NRGBA{v, v, v, 0xff}
	}
	return l, nil
}

// Ramp returns the ramp's name.
func (l *LUT) Ramp() string { return l.ramp.name }

// Range returns the stretch the LUT spans ([-1, 1] for classes).
func (l *LUT) Range() Stretch { return Stretch{l.lo, l.hi} }

// Discrete reports whether the LUT maps classes rather than a continuous
// ramp.
func (l *LUT) Discrete() bool { return l.ramp.discrete }

// ambiguous marks a step of the class table that needs ClassOf.
const ambiguous = 0xff

// classSteps tabulates the class of each of lutSize steps of [-1, 1]. A
// step that holds a class bound, and its neighbours (float32 rounding may
// put a value one step off), are marked ambiguous.
func classSteps() []uint8 {
	cls := make([]uint8, lutSize)
	at := func(i int) int { return ClassOf(float32(-1 + 2*float64(i)/lutSize)) }
	for i := range cls {
		cls[i] = uint8(at(i))
		if at(i+1) != at(i) || (i > 0 && at(i-1) != at(i)) || (i+2 <= lutSize && at(i+2) != at(i+1)) {
			cls[i] = ambiguous
		}
	}
	return cls
}

// class returns ClassOf(v) using the step table of the classes ramp.
func (l *LUT) class(v float32) int {
	f := (v + 1) * (lutSize / 2)
	if f >= 0 && f < lutSize {
		if c := l.cls[int(f)]; c != ambiguous {
			return int(c)
		}
	}
	return ClassOf(v)
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
