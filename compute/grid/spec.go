package grid

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"canopy/compute/geo"
	"canopy/compute/request"
)

// Spec is a target grid as a user names it (--grid): a GeoTIFF whose
// grid to take, or a system with an optional pixel size and extent whose
// missing parts come from the data.
type Spec struct {
	// Like is a GeoTIFF path whose grid is taken whole.
	Like string
	// UTM asks for the UTM zone that covers most of the data.
	UTM bool
	// CRS and EPSG are the system (when not Like or UTM).
	CRS  string
	EPSG int
	// ResX, ResY are the pixel size (0: the data's finest, in metres).
	ResX, ResY float64
	// Bounds, when HasBounds, is the extent W, S, E, N in the system.
	Bounds    [4]float64
	HasBounds bool
}

// ParseSpec reads --grid: "FILE.tif" (that raster's grid), "utm[,RES]",
// or "CRS[,RES[,W,S,E,N]]" with CRS as EPSG:N or a bare code and RES the
// pixel size in the system's units.
func ParseSpec(s string, like func(path string) (Grid, error)) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("empty grid: want FILE.tif, utm[,RES] or EPSG:N[,RES[,W,S,E,N]]")
	}
	if st, err := os.Stat(s); err == nil && !st.IsDir() {
		if _, err := like(s); err != nil {
			return Spec{}, err
		}
		return Spec{Like: s}, nil
	}
	parts := strings.Split(s, ",")
	var sp Spec
	if strings.EqualFold(strings.TrimSpace(parts[0]), "utm") {
		sp.UTM = true
	} else {
		def, epsg, err := ParseCRS(parts[0])
		if err != nil {
			if strings.ContainsAny(parts[0], "/\\.") {
				return Spec{}, fmt.Errorf("%s: no such raster and not a CRS", parts[0])
			}
			return Spec{}, err
		}
		sp.CRS, sp.EPSG = def, epsg
	}
	nums := make([]float64, 0, 5)
	for _, p := range parts[1:] {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Spec{}, fmt.Errorf("grid %q: %q is not a number", s, strings.TrimSpace(p))
		}
		nums = append(nums, v)
	}
	switch len(nums) {
	case 0:
	case 1, 5:
		if !(nums[0] > 0) {
			return Spec{}, fmt.Errorf("grid %q: the pixel size must be positive", s)
		}
		sp.ResX, sp.ResY = nums[0], nums[0]
		if len(nums) == 5 {
			if sp.UTM {
				return Spec{}, fmt.Errorf("grid %q: an extent needs a named system, not utm", s)
			}
			sp.Bounds, sp.HasBounds = [4]float64{nums[1], nums[2], nums[3], nums[4]}, true
			if !(nums[1] < nums[3]) || !(nums[2] < nums[4]) {
				return Spec{}, fmt.Errorf("grid %q: west must be less than east and south less than north", s)
			}
		}
	default:
		return Spec{}, fmt.Errorf("grid %q: want CRS, CRS,RES or CRS,RES,W,S,E,N", s)
	}
	return sp, nil
}

// Resolve makes the grid of the spec for data lying on the grids of
// data: the UTM zone covering most of them when asked, their finest pixel
// (in metres, when both systems are metric) when no size is given, and
// the union of their footprints, aligned to the pixel size, when no
// extent is.
func (sp Spec) Resolve(data []Grid, like func(path string) (Grid, error)) (Grid, error) {
	if sp.Like != "" {
		return like(sp.Like)
	}
	if len(data) == 0 {
		return Grid{}, errors.New("no data to lay a grid over")
	}
	def, epsg := sp.CRS, sp.EPSG
	if sp.UTM {
		var areas [][4]float64
		for _, g := range data {
			ll, err := LonLat(g)
			if err != nil {
				return Grid{}, err
			}
			areas = append(areas, ll)
		}
		code, err := UTMZone(areas...)
		if err != nil {
			return Grid{}, err
		}
		def, epsg = fmt.Sprintf("EPSG:%d", code), code
	}
	rx, ry := sp.ResX, sp.ResY
	if rx == 0 {
		c, err := geo.Describe(def)
		if err != nil {
			return Grid{}, err
		}
		m, ok := c.MetresPerUnit()
		for _, g := range data {
			ic, err := geo.Describe(g.CRS)
			if err != nil {
				return Grid{}, err
			}
			im, iok := ic.MetresPerUnit()
			if !ok || !iok {
				return Grid{}, request.Errorf("the grid's system or the data's is not in metres: give the pixel size (CRS,RES)")
			}
			px := math.Min(g.ResX, g.ResY) * im / m
			if rx == 0 || px < rx {
				rx, ry = px, px
			}
		}
	}
	b := sp.Bounds
	if !sp.HasBounds {
		var fps [][4]float64
		for _, g := range data {
			fp, err := Footprint(g, def)
			if err != nil {
				return Grid{}, err
			}
			fps = append(fps, fp)
		}
		b = Union(fps...)
	}
	return Aligned(def, epsg, rx, ry, b)
}
