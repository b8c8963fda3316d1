package geotiff

import "fmt"

// SampleType is the numeric type of a raster's samples.
type SampleType int

// The sample types the reader decodes; the writer writes all of them too.
const (
	Uint8 SampleType = iota + 1
	Int8
	Uint16
	Int16
	Uint32
	Int32
	Uint64
	Int64
	Float32
	Float64
)

var sampleNames = [...]string{
	Uint8: "uint8", Int8: "int8", Uint16: "uint16", Int16: "int16",
	Uint32: "uint32", Int32: "int32", Uint64: "uint64", Int64: "int64",
	Float32: "float32", Float64: "float64",
}

// String returns the Go-style name of the type ("uint16").
func (t SampleType) String() string {
	if t >= Uint8 && t <= Float64 {
		return sampleNames[t]
	}
	return fmt.Sprintf("SampleType(%d)", int(t))
}

// Size is the size of one sample in bytes.
func (t SampleType) Size() int {
	switch t {
	case Uint8, Int8:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32, Float32:
		return 4
	case Uint64, Int64, Float64:
		return 8
	}
	return 0
}

// Float reports whether t is a floating-point type.
func (t SampleType) Float() bool { return t == Float32 || t == Float64 }

// sampleFormat returns the SampleFormat tag value (1 unsigned, 2 signed,
// 3 float).
func (t SampleType) sampleFormat() int {
	switch t {
	case Int8, Int16, Int32, Int64:
		return 2
	case Float32, Float64:
		return 3
	}
	return 1
}

// sampleType maps SampleFormat and BitsPerSample to a SampleType.
func sampleType(format, bits int) (SampleType, bool) {
	switch {
	case format == 1 && bits == 8:
		return Uint8, true
	case format == 2 && bits == 8:
		return Int8, true
	case format == 1 && bits == 16:
		return Uint16, true
	case format == 2 && bits == 16:
		return Int16, true
	case format == 1 && bits == 32:
		return Uint32, true
	case format == 2 && bits == 32:
		return Int32, true
	case format == 1 && bits == 64:
		return Uint64, true
	case format == 2 && bits == 64:
		return Int64, true
	case format == 3 && bits == 32:
		return Float32, true
	case format == 3 && bits == 64:
		return Float64, true
	}
	return 0, false
}

// Sample is the set of Go types WriteBands accepts, one per SampleType.
type Sample interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64 | float32 | float64
}
