package compute

import (
	"fmt"
	"math"
	"unsafe"
)

// DataType is how a band's samples are stored: kernels read this type and
// convert inside, so integer bands travel to the GPU as integers.
type DataType uint8

// The stored sample types the engine reads.
const (
	U8 DataType = iota + 1
	U16
	I16
	U32
	I32
	F32
)

var dataTypeNames = [...]string{U8: "uint8", U16: "uint16", I16: "int16", U32: "uint32", I32: "int32", F32: "float32"}

// String is the type's name as GDAL writes it in lower case ("uint16").
func (t DataType) String() string {
	if int(t) < len(dataTypeNames) && dataTypeNames[t] != "" {
		return dataTypeNames[t]
	}
	return fmt.Sprintf("DataType(%d)", uint8(t))
}

// Size is the bytes of one sample (0 for an unknown type).
func (t DataType) Size() int {
	switch t {
	case U8:
		return 1
	case U16, I16:
		return 2
	case U32, I32, F32:
		return 4
	}
	return 0
}

// Plane is one band's samples as stored, row-major, in the machine's byte
// order: Width*Height samples of Type in Data. The typed views (U16, F32,
// ...) share Data's memory.
type Plane struct {
	Type          DataType
	Width, Height int
	Data          []byte
}

// NewPlane allocates a zeroed w×h plane of type t.
func NewPlane(t DataType, w, h int) Plane {
	return Plane{Type: t, Width: w, Height: h, Data: make([]byte, w*h*t.Size())}
}

// PlaneOf wraps typed samples (no copy) as a w×h plane.
func PlaneOf[T uint8 | uint16 | int16 | uint32 | int32 | float32](w, h int, s []T) Plane {
	var z T
	var t DataType
	switch any(z).(type) {
	case uint8:
		t = U8
	case uint16:
		t = U16
	case int16:
		t = I16
	case uint32:
		t = U32
	case int32:
		t = I32
	case float32:
		t = F32
	}
	var b []byte
	if len(s) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*t.Size())
	}
	return Plane{Type: t, Width: w, Height: h, Data: b}
}

// Pixels returns Width*Height.
func (p Plane) Pixels() int { return p.Width * p.Height }

// Check reports a plane whose bytes do not hold its pixels.
func (p Plane) Check() error {
	if p.Type.Size() == 0 {
		return fmt.Errorf("plane has unknown sample type %d", p.Type)
	}
	if p.Width <= 0 || p.Height <= 0 {
		return fmt.Errorf("plane size %dx%d: both sides must be positive", p.Width, p.Height)
	}
	if len(p.Data) != p.Pixels()*p.Type.Size() {
		return fmt.Errorf("%dx%d %s plane needs %d bytes, has %d", p.Width, p.Height, p.Type, p.Pixels()*p.Type.Size(), len(p.Data))
	}
	return nil
}

func view[T any](b []byte, size int) []T {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
}

// U8 views a uint8 plane's samples (nil for another type).
func (p Plane) U8() []uint8 {
	if p.Type != U8 {
		return nil
	}
	return p.Data
}

// U16 views a uint16 plane's samples (nil for another type).
func (p Plane) U16() []uint16 {
	if p.Type != U16 {
		return nil
	}
	return view[uint16](p.Data, 2)
}

// I16 views an int16 plane's samples (nil for another type).
func (p Plane) I16() []int16 {
	if p.Type != I16 {
		return nil
	}
	return view[int16](p.Data, 2)
}

// U32 views a uint32 plane's samples (nil for another type).
func (p Plane) U32() []uint32 {
	if p.Type != U32 {
		return nil
	}
	return view[uint32](p.Data, 4)
}

// I32 views an int32 plane's samples (nil for another type).
func (p Plane) I32() []int32 {
	if p.Type != I32 {
		return nil
	}
	return view[int32](p.Data, 4)
}

// F32 views a float32 plane's samples (nil for another type).
func (p Plane) F32() []float32 {
	if p.Type != F32 {
		return nil
	}
	return view[float32](p.Data, 4)
}

// At returns sample i as a float64, exactly (every stored type fits).
func (p Plane) At(i int) float64 {
	switch p.Type {
	case U8:
		return float64(p.Data[i])
	case U16:
		return float64(p.U16()[i])
	case I16:
		return float64(p.I16()[i])
	case U32:
		return float64(p.U32()[i])
	case I32:
		return float64(p.I32()[i])
	case F32:
		return float64(p.F32()[i])
	}
	return math.NaN()
}

// Radiometry turns a stored sample (a digital number, DN) into the physical
// value the index formulas expect (reflectance): (DN + Add) * Scale + Offset,
// in that order, so that Sentinel-2's (DN + BOA_ADD_OFFSET) / QUANTIFICATION
// maps a reflectance of exactly 0 to exactly 0 (Add -1000, Scale 1e-4), and
// Landsat Collection 2's DN * 2.75e-5 - 0.2 is Scale 2.75e-5, Offset -0.2.
// The zero value is not valid; use Identity for bands already in physical
// units.
type Radiometry struct {
	Add    float64 `json:"add,omitempty"`
	Scale  float64 `json:"scale"`
	Offset float64 `json:"offset,omitempty"`
}

// Identity is the radiometry of a band stored as physical values.
func Identity() Radiometry { return Radiometry{Scale: 1} }

// IsIdentity reports whether r leaves values unchanged.
func (r Radiometry) IsIdentity() bool { return r.Add == 0 && r.Scale == 1 && r.Offset == 0 }

// Apply64 is the float64 conversion of one stored value.
func (r Radiometry) Apply64(dn float64) float64 { return (dn+r.Add)*r.Scale + r.Offset }

// BandInput is one band as a kernel receives it: its role in the formulas,
// its stored samples, how to turn them into physical values, and which
// stored value (if any) means "no data". A pixel equal to NoData, or NaN in
// a float band, makes every index that uses the band NaN there.
type BandInput struct {
	Role       string
	Plane      Plane
	Radiometry Radiometry
	NoData     float64
	HasNoData  bool
	// Source names where the band came from, for messages ("red.tif:3").
	Source string
}
