package geotiff

import (
	"encoding/binary"
	"math"
)

// convFunc converts len(dst) samples to float32. Sample i starts at byte
// i*stride of src; stride is the pixel size in bytes.
type convFunc func(dst []float32, src []byte, stride int)

// converter returns the conversion for samples of type t stored in the
// given byte order.
func converter(t SampleType, bigEndian bool) convFunc {
	if bigEndian {
		switch t {
		case Uint16:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(binary.BigEndian.Uint16(s[i*st:]))
				}
			}
		case Int16:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(int16(binary.BigEndian.Uint16(s[i*st:])))
				}
			}
		case Uint32:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(binary.BigEndian.Uint32(s[i*st:]))
				}
			}
		case Int32:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(int32(binary.BigEndian.Uint32(s[i*st:])))
				}
			}
		case Uint64:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(binary.BigEndian.Uint64(s[i*st:]))
				}
			}
		case Int64:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(int64(binary.BigEndian.Uint64(s[i*st:])))
				}
			}
		case Float32:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = math.Float32frombits(binary.BigEndian.Uint32(s[i*st:]))
				}
			}
		case Float64:
			return func(d []float32, s []byte, st int) {
				for i := range d {
					d[i] = float32(math.Float64frombits(binary.BigEndian.Uint64(s[i*st:])))
				}
			}
		}
	}
	switch t {
	case Uint8:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(s[i*st])
			}
		}
	case Int8:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(int8(s[i*st]))
			}
		}
	case Uint16:
		return func(d []float32, s []byte, st int) {
			if st == 2 {
				s = s[:2*len(d)]
				for i := range d {
					d[i] = float32(binary.LittleEndian.Uint16(s[2*i:]))
				}
				return
			}
			for i := range d {
				d[i] = float32(binary.LittleEndian.Uint16(s[i*st:]))
			}
		}
	case Int16:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(int16(binary.LittleEndian.Uint16(s[i*st:])))
			}
		}
	case Uint32:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(binary.LittleEndian.Uint32(s[i*st:]))
			}
		}
	case Int32:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(int32(binary.LittleEndian.Uint32(s[i*st:])))
			}
		}
	case Uint64:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(binary.LittleEndian.Uint64(s[i*st:]))
			}
		}
	case Int64:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(int64(binary.LittleEndian.Uint64(s[i*st:])))
			}
		}
	case Float32:
		return func(d []float32, s []byte, st int) {
			if st == 4 {
				s = s[:4*len(d)]
				for i := range d {
					d[i] = math.Float32frombits(binary.LittleEndian.Uint32(s[4*i:]))
				}
				return
			}
			for i := range d {
				d[i] = math.Float32frombits(binary.LittleEndian.Uint32(s[i*st:]))
			}
		}
	case Float64:
		return func(d []float32, s []byte, st int) {
			for i := range d {
				d[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(s[i*st:])))
			}
		}
	}
	return nil
}
