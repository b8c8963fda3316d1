package composite

import (
	"math"
	"slices"

	"canopy/compute"
	"canopy/compute/par"
)

// Stored values are ordered through 32-bit keys that sort as the values
// do: an 8- or 16-bit value's key is its 16-bit order key shifted to the
// top half (the low half 0), so one histogram of the top 16 bits holds the
// values exactly; a 32-bit value needs a second histogram of the low 16
// bits inside the top bins the percentiles fall in.

// chunk is the number of pixels a worker keys at a time.
const chunk = 4096

// keys writes the order keys of pixels [a, a+len(dst)) of b into dst and
// clears ok where the pixel is nodata or NaN.
func keys(dst []uint32, ok []bool, b compute.BandInput, a int) {
	n := len(dst)
	nd, has := b.NoData, b.HasNoData
	switch p := b.Plane; p.Type {
	case compute.U8:
		for j, v := range p.U8()[a : a+n] {
			dst[j] = uint32(v) << 16
			if has && float64(v) == nd {
				ok[j] = false
			}
		}
	case compute.U16:
		for j, v := range p.U16()[a : a+n] {
			dst[j] = uint32(v) << 16
			if has && float64(v) == nd {
				ok[j] = false
			}
		}
	case compute.I16:
		for j, v := range p.I16()[a : a+n] {
			dst[j] = uint32(uint16(v)^0x8000) << 16
			if has && float64(v) == nd {
				ok[j] = false
			}
		}
	case compute.U32:
		for j, v := range p.U32()[a : a+n] {
			dst[j] = v
			if has && float64(v) == nd {
				ok[j] = false
			}
		}
	case compute.I32:
		for j, v := range p.I32()[a : a+n] {
			dst[j] = uint32(v) ^ 0x80000000
			if has && float64(v) == nd {
				ok[j] = false
			}
		}
	case compute.F32:
		for j, v := range p.F32()[a : a+n] {
			bits := math.Float32bits(v)
			if bits&0x80000000 != 0 {
				dst[j] = ^bits
			} else {
				dst[j] = bits | 0x80000000
			}
			if v != v || has && float64(v) == nd {
				ok[j] = false
			}
		}
	}
}

// storedOf is the stored value of a key, false for a key no value of t
// has (a 16-bit type's key with a low half, an I16 key outside int16).
func storedOf(t compute.DataType, key uint32) (float64, bool) {
	switch t {
	case compute.U8:
		return float64(key >> 16), key>>16 < 256 && key&0xffff == 0
	case compute.U16:
		return float64(key >> 16), key&0xffff == 0
	case compute.I16:
		return float64(int16(uint16(key>>16) ^ 0x8000)), key&0xffff == 0
	case compute.U32:
		return float64(key), true
	case compute.I32:
		return float64(int32(key ^ 0x80000000)), true
	case compute.F32:
		var bits uint32
		if key&0x80000000 != 0 {
			bits = key &^ 0x80000000
		} else {
			bits = ^key
		}
		v := math.Float32frombits(bits)
		return float64(v), v == v
	}
	return math.NaN(), false
}

// validity marks pixels [a, a+len(ok)) usable by the mask and keys the
// three bands into ks, clearing ok where any band is nodata or NaN.
func validity(ok []bool, ks *[3][]uint32, bands [3]compute.BandInput, mask []uint8, a int) {
	if mask == nil {
		for j := range ok {
			ok[j] = true
		}
	} else {
		for j, m := range mask[a : a+len(ok)] {
			ok[j] = m == 0
		}
	}
	for c := range bands {
		keys(ks[c][:len(ok)], ok, bands[c], a)
	}
}

// rankPick is one order statistic wanted: the rank among the valid
// values of a channel, and where it was found.
type rankPick struct {
	rank uint64
	top  uint32 // its top-16 bin
	in   uint64 // its rank inside the bin
	key  uint32
}

// percentiles returns, for each band, the reflectance at quantiles qLo and
// qHi (fractions) of its valid pixels with NumPy's linear rule: the value
// at position q·(n−1) of the sorted values, interpolated between its two
// neighbours. It also returns n, the number of valid pixels (a pixel is
// valid when no band is nodata or NaN and the mask is 0 there).
func percentiles(bands [3]compute.BandInput, mask []uint8, qLo, qHi float64) ([3][2]float64, int) {
	n := bands[0].Plane.Pixels()
	// Pass 1: histograms of the top 16 bits, per part.
	type part struct {
		hist  [3][]uint32
		count int
	}
	parts := make([]part, par.Workers(n))
	par.Ranges(n, 1<<16, func(p, lo, hi int) {
		pt := &parts[p]
		for c := range pt.hist {
			pt.hist[c] = make([]uint32, 1<<16)
		}
		var ks [3][]uint32
		for c := range ks {
			ks[c] = make([]uint32, chunk)
		}
		ok := make([]bool, chunk)
		for a := lo; a < hi; a += chunk {
			m := min(chunk, hi-a)
			validity(ok[:m], &ks, bands, mask, a)
			for j, good := range ok[:m] {
				if good {
					pt.count++
					pt.hist[0][ks[0][j]>>16]++
					pt.hist[1][ks[1][j]>>16]++
					pt.hist[2][ks[2][j]>>16]++
				}
			}
		}
	})
	var hist [3][]uint64
	valid := 0
	for c := range hist {
		hist[c] = make([]uint64, 1<<16)
	}
	for _, pt := range parts {
		if pt.hist[0] == nil {
			continue
		}
		valid += pt.count
		for c := range hist {
			for i, v := range pt.hist[c] {
				hist[c][i] += uint64(v)
			}
		}
	}
	var out [3][2]float64
	if valid == 0 {
		return out, 0
	}
	// The order statistics each bound needs: positions k and k+1 of the
	// reflectance's order (reversed for a negative scale).
	type bound struct {
		picks [2]*rankPick
		frac  float64
	}
	var bounds [3][2]bound
	var picks [3][]*rankPick
	for c, b := range bands {
		for i, q := range [2]float64{qLo, qHi} {
			pos := q * float64(valid-1)
			k := int(math.Floor(pos))
			k1 := min(k+1, valid-1)
			bd := bound{frac: pos - float64(k)}
			for j, r := range [2]int{k, k1} {
				if b.Radiometry.Scale < 0 {
					r = valid - 1 - r
				}
				pk := &rankPick{rank: uint64(r)}
				bd.picks[j] = pk
				picks[c] = append(picks[c], pk)
			}
			bounds[c][i] = bd
		}
		for _, pk := range picks[c] {
			cum := uint64(0)
			for t, v := range hist[c] {
				if cum+v > pk.rank {
					pk.top, pk.in = uint32(t), pk.rank-cum
					break
				}
				cum += v
			}
			pk.key = pk.top << 16
		}
	}
	// Pass 2, for 32-bit bands: histograms of the low 16 bits inside the
	// top bins picked.
	var tops [3][]uint32
	need := false
	for c, b := range bands {
		if b.Plane.Type.Size() <= 2 {
			continue
		}
		for _, pk := range picks[c] {
			if !slices.Contains(tops[c], pk.top) {
				tops[c] = append(tops[c], pk.top)
			}
		}
		need = true
	}
	if need {
		type part2 struct{ hist [3][][]uint32 }
		parts2 := make([]part2, par.Workers(n))
		par.Ranges(n, 1<<16, func(p, lo, hi int) {
			pt := &parts2[p]
			for c := range tops {
				for range tops[c] {
					pt.hist[c] = append(pt.hist[c], make([]uint32, 1<<16))
				}
			}
			var ks [3][]uint32
			for c := range ks {
				ks[c] = make([]uint32, chunk)
			}
			ok := make([]bool, chunk)
			for a := lo; a < hi; a += chunk {
				m := min(chunk, hi-a)
				validity(ok[:m], &ks, bands, mask, a)
				for c, ts := range tops {
					for ti, t := range ts {
						h := pt.hist[c][ti]
						for j, good := range ok[:m] {
							if k := ks[c][j]; good && k>>16 == t {
								h[k&0xffff]++
							}
						}
					}
				}
			}
		})
		for c, ts := range tops {
			for ti, t := range ts {
				low := make([]uint64, 1<<16)
				for _, pt := range parts2 {
					if pt.hist[c] == nil {
						continue
					}
					for i, v := range pt.hist[c][ti] {
						low[i] += uint64(v)
					}
				}
				for _, pk := range picks[c] {
					if pk.top != t {
						continue
					}
					cum := uint64(0)
					for l, v := range low {
						if cum+v > pk.in {
							pk.key = t<<16 | uint32(l)
							break
						}
						cum += v
					}
				}
			}
		}
	}
	for c, b := range bands {
		for i := range 2 {
			bd := bounds[c][i]
			v0, _ := storedOf(b.Plane.Type, bd.picks[0].key)
			v1, _ := storedOf(b.Plane.Type, bd.picks[1].key)
			r0, r1 := b.Radiometry.Apply64(v0), b.Radiometry.Apply64(v1)
			out[c][i] = r0 + bd.frac*(r1-r0)
		}
	}
	return out, valid
}
