package stac

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/remote"
)

// Preview reads a small picture of an item, for a list of scenes: its
// red, green and blue bands (the three bands of a "visual" asset, else the
// assets of those common names), each from the smallest overview of its
// COG whose longer side still has side pixels (the full resolution when
// no overview is that large, the smallest overview when the image itself
// is far larger and has none that small). A file costs its header GET and
// the overview's tiles, merged. The bands come at their stored type with
// the asset's scale, offset and nodata (raster:bands). sign may be nil.
func Preview(ctx context.Context, c *remote.Client, sign remote.Signer, it Item, side int) ([3]compute.BandInput, error) {
	var out [3]compute.BandInput
	base := ""
	for _, l := range it.Links {
		if l.Rel == "self" {
			base = l.Href
		}
	}
	type pick struct {
		asset Asset
		band  int
	}
	var picks [3]pick
	if a, ok := visual(it); ok {
		for i := range picks {
			picks[i] = pick{a, i + 1}
		}
	} else {
		for i, role := range []string{"red", "green", "blue"} {
			a, ok := byCommonName(it, role)
			if !ok {
				return out, fmt.Errorf("%s: no visual asset and no %s band to draw", it.ID, role)
			}
			picks[i] = pick{a, 1}
		}
	}
	// The picks of one file are read in one pass (the visual asset's
	// three bands: its overview's tiles fetched once).
	var order []string
	byFile := map[string][]int{}
	for i, p := range picks {
		href, err := resolve(base, p.asset.Href)
		if err != nil {
			return out, fmt.Errorf("%s: %v", it.ID, err)
		}
		if byFile[href] == nil {
			order = append(order, href)
		}
		byFile[href] = append(byFile[href], i)
	}
	for _, href := range order {
		f, err := c.Open(ctx, href, sign)
		if err != nil {
			return out, err
		}
		defer f.Close()
		full, err := geotiff.NewReader(f, f.Size(), f.Name())
		if err != nil {
			return out, err
		}
		defer full.Close()
		g, err := level(full, side)
		if err != nil {
			return out, err
		}
		dt, _ := g.DataType()
		var bands []int
		var planes []compute.Plane
		for _, i := range byFile[href] {
			if picks[i].band > g.Bands() {
				return out, fmt.Errorf("%s: the visual asset has %d bands, not 3", it.ID, g.Bands())
			}
			bands = append(bands, picks[i].band)
			planes = append(planes, compute.NewPlane(dt, g.Width(), g.Height()))
		}
		if err := g.ReadRowsBandsInto(0, g.Height(), bands, planes); err != nil {
			return out, err
		}
		for k, i := range byFile[href] {
			p := picks[i]
			b := compute.BandInput{Role: []string{"red", "green", "blue"}[i], Plane: planes[k], Radiometry: compute.Identity(), Source: href}
			if nd, ok := g.NoData(); ok {
				b.NoData, b.HasNoData = nd, true
			}
			if rb := p.asset.RasterBands; len(rb) >= p.band {
				r := rb[p.band-1]
				if r.Scale != nil && *r.Scale != 0 {
					b.Radiometry.Scale = *r.Scale
				}
				if r.Offset != nil {
					b.Radiometry.Offset = *r.Offset
				}
				switch v := r.NoData.(type) {
				case float64:
					b.NoData, b.HasNoData = v, true
				case string:
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						b.NoData, b.HasNoData = f, true
					}
				}
			}
			out[i] = b
		}
	}
	for i := 1; i < 3; i++ {
		if out[i].Plane.Width != out[0].Plane.Width || out[i].Plane.Height != out[0].Plane.Height {
			return out, fmt.Errorf("%s: its bands' overviews differ in size (%d×%d and %d×%d)", it.ID, out[0].Plane.Width, out[0].Plane.Height, out[i].Plane.Width, out[i].Plane.Height)
		}
	}
	return out, nil
}

// level is the image of f to draw at about side pixels: the smallest
// overview whose longer side is at least side, else the full resolution
// when it is at most 4 side, else the smallest overview.
func level(f *geotiff.File, side int) (*geotiff.File, error) {
	ovs, err := f.Overviews()
	if err != nil {
		return nil, err
	}
	best := f
	for _, o := range ovs {
		if max(o.Width(), o.Height()) >= side && max(o.Width(), o.Height()) < max(best.Width(), best.Height()) {
			best = o
		}
	}
	if best == f && max(f.Width(), f.Height()) > 4*side && len(ovs) > 0 {
		best = ovs[len(ovs)-1]
		for _, o := range ovs {
			if o.Width() < best.Width() {
				best = o
			}
		}
	}
	if max(best.Width(), best.Height()) > 16*max(side, 64) {
		return nil, fmt.Errorf("%s: no overview small enough to draw (%d×%d)", f.Name(), best.Width(), best.Height())
	}
	return best, nil
}

// visual is an item's true-colour asset (Earth Search's and the
// Planetary Computer's Sentinel-2 "visual"), a three-band COG.
func visual(it Item) (Asset, bool) {
	if a, ok := it.Assets["visual"]; ok && isTIFF(a) {
		return a, true
	}
	for _, a := range it.Assets {
		if a.HasRole("visual") && isTIFF(a) {
			return a, true
		}
	}
	return Asset{}, false
}

// byCommonName is the single-band asset of a colour (key or eo:bands).
func byCommonName(it Item, name string) (Asset, bool) {
	if a, ok := it.Assets[name]; ok && isTIFF(a) {
		return a, true
	}
	for _, a := range it.Assets {
		if len(a.EOBands) == 1 && a.EOBands[0].CommonName == name && isTIFF(a) {
			return a, true
		}
	}
	return Asset{}, false
}

func isTIFF(a Asset) bool {
	t, h := strings.ToLower(a.Type), strings.ToLower(a.Href)
	if q := strings.IndexByte(h, '?'); q >= 0 {
		h = h[:q]
	}
	return strings.Contains(t, "tiff") || strings.HasSuffix(h, ".tif") || strings.HasSuffix(h, ".tiff")
}

// resolve is an asset's href as a URL, relative ones against the item's.
func resolve(base, href string) (string, error) {
	if remote.IsURL(href) {
		return remote.HTTPURL(href)
	}
	if base == "" {
		return "", fmt.Errorf("the asset %q is relative and the item has no URL of its own", href)
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(href)
	if err != nil {
		return "", err
	}
	return b.ResolveReference(r).String(), nil
}
