package scene

import (
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// readView reads a ViewBand whole through OpenFile, as a reader by views
// does (any block of it reads the same samples).
func readView(t *testing.T, s *Scene, b ViewBand) compute.Plane {
	t.Helper()
	r, n, name, err := s.OpenFile(b.File)
	if err != nil {
		t.Fatal(err)
	}
	f, err := geotiff.NewReader(r, n, name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := compute.NewPlane(b.Plane.Type, b.Plane.Width, b.Plane.Height)
	if err := f.ReadRowsInto(b.Band, 0, b.Plane.Height, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestViewsMatchLoad: for the products of GeoTIFFs (Landsat as a folder
// and a tar, both orthomosaics), the bands Views describes are the bands
// Load gives (role, type, radiometry, nodata, source), their samples read
// through OpenFile are Load's, and the mask Views.Mask makes from those
// samples is Load's, pixel for pixel, with "auto" and "none".
func TestViewsMatchLoad(t *testing.T) {
	cases := []struct {
		path   string
		roles  []string
		masked int // at least this many pixels masked
	}{
		{fx(t, lsID), []string{"red", "nir"}, 40},
		{fx(t, lsID+".tar"), []string{"red", "nir"}, 40},
		{fx(t, lsID), []string{"blue"}, 40}, // QA_RADSAT bit 0 is blue's
		{fx(t, "ortho_rgba.tif"), []string{"red", "green", "blue"}, 64 * 6},
		{fx(t, "ortho_ms.tif"), []string{"red", "nir"}, 64 * 6},
	}
	for _, c := range cases {
		s, err := Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"auto", "none"} {
			want, wantMask, err := s.Load(c.roles, LoadOptions{Mask: mode})
			if err != nil {
				t.Fatal(err)
			}
			v, err := s.Views(c.roles, LoadOptions{Mask: mode})
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			if (mode == "none") == v.HasMask() || (mode == "none") != (v.Masks == nil) {
				t.Errorf("%s mask %s: HasMask %v, %d mask bands", c.path, mode, v.HasMask(), len(v.Masks))
			}
			// Only an alpha band may be read from overviews.
			if want := mode == "none" || strings.HasPrefix(filepath.Base(c.path), "ortho"); v.MaskFromOverviews() != want {
				t.Errorf("%s mask %s: MaskFromOverviews %v", c.path, mode, !want)
			}
			var planes, masks []compute.Plane
			for i, b := range v.Bands {
				w := want[i]
				got := b.BandInput
				if got.Role != w.Role || got.Plane.Type != w.Plane.Type || got.Plane.Width != w.Plane.Width || got.Plane.Height != w.Plane.Height ||
					got.Radiometry != w.Radiometry || got.NoData != w.NoData || got.HasNoData != w.HasNoData || got.Source != w.Source {
					t.Errorf("%s: view band %+v, Load's %+v", c.path, got, w)
				}
				p := readView(t, s, b)
				if string(p.Data) != string(w.Plane.Data) {
					t.Errorf("%s: band %s read through OpenFile differs from Load's", c.path, b.Role)
				}
				planes = append(planes, p)
			}
			for _, b := range v.Masks {
				masks = append(masks, readView(t, s, b))
			}
			if mode == "none" {
				continue
			}
			got := make([]uint8, len(wantMask))
			v.Mask(planes, masks, got)
			n := 0
			for i := range got {
				if got[i] != wantMask[i] {
					t.Fatalf("%s %v: pixel %d masked %d by views, %d by Load", c.path, c.roles, i, got[i], wantMask[i])
				}
				n += int(got[i])
			}
			if n < c.masked {
				t.Errorf("%s %v: %d pixels masked, the fixture masks at least %d", c.path, c.roles, n, c.masked)
			}
		}
		s.Close()
	}
}

// TestViewsRefused: what a reader by views cannot give as Load does is
// refused with the reason: Sentinel-2's JPEG 2000 bands, a zip's members,
// a STAC item whose mask is coarser than its grid, a mask buffer that
// grows clouds.
func TestViewsRefused(t *testing.T) {
	for _, c := range []struct {
		path  string
		opt   LoadOptions
		roles []string
		want  string
	}{
		{fx(t, s2New+".SAFE"), LoadOptions{}, []string{"red", "nir"}, "not a GeoTIFF"},
		{fx(t, "stored/"+s2New+".SAFE.zip"), LoadOptions{}, []string{"red", "nir"}, "zip"},
		{fx(t, "stac/item.json"), LoadOptions{}, []string{"red", "nir"}, "not on the 10 m grid"},
		{fx(t, lsID), LoadOptions{MaskBuffer: 2}, []string{"red", "nir"}, "mask buffer"},
	} {
		s, err := Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Views(c.roles, c.opt)
		oneLine(t, c.path, err, c.want)
		s.Close()
	}
	// The STAC item's 10 m bands alone, unmasked, are read by views.
	s, err := Open(fx(t, "stac/item.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Views([]string{"red", "nir"}, LoadOptions{Mask: "none"}); err != nil || len(v.Bands) != 2 || !strings.HasSuffix(v.Bands[0].Source, "B04.tif:1") {
		t.Errorf("STAC 10 m bands unmasked: %v %+v", err, v)
	}
}
