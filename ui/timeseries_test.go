package ui

import (
	"context"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/season"
)

// writeTSStack writes n dates of a w×h red/nir GeoTIFF, 30 days apart,
// dated by their names; the pixel (3, 2) drops sharply on the last dates
// (a break) and one date of each pixel in turn is nodata (masked).
func writeTSStack(t *testing.T, n, w, h int) []string {
	t.Helper()
	dir := t.TempDir()
	d0 := time.Date(2021, 1, 5, 0, 0, 0, 0, time.UTC)
	var paths []string
	for i := range n {
		d := d0.AddDate(0, 0, 45*i)
		red, nir := make([]uint16, w*h), make([]uint16, w*h)
		for k := range red {
			sea := math.Cos(2 * math.Pi * float64(d.YearDay()) / 365)
			red[k] = uint16(500 + 5*k + int(150*sea))
			nir[k] = uint16(3000 + 17*k - int(900*sea))
			if k == 2*w+3 && i >= n-3 {
				nir[k] = 700 // cleared: the index falls
			}
		}
		red[(i*7)%len(red)] = 0
		p := filepath.Join(dir, "t_"+d.Format("20060102")+".tif")
		g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0},
			GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632}}
		if err := geotiff.WriteBands(p, w, h, [][]uint16{red, nir}, g, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestTimeSeriesView opens a generated stack in the time-series window,
// moves the date slider and clicks a pixel.
func TestTimeSeriesView(t *testing.T) {
	test.NewTempApp(t)
	const n, w, h = 16, 9, 7
	paths := writeTSStack(t, n, w, h)
	s, err := openTSStack(context.Background(), paths, "ndvi")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.dates) != n || s.w != w || s.h != h {
		t.Fatalf("stack of %d dates %d×%d, want %d %d×%d", len(s.dates), s.w, s.h, n, w, h)
	}
	win := test.NewWindow(nil)
	defer win.Close()
	win.Resize(fyne.NewSize(700, 600))
	v := newTimeSeriesView(win, s)

	// The slider picks the date the map shows: the map's plane is the
	// stack's date, the NDVI of that date's GeoTIFF.
	want, err := s.st.Cube(0, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	v.slider.SetValue(5)
	if v.date != 5 {
		t.Fatalf("slider at 5 shows date %d", v.date)
	}
	P := w * h
	plane := v.s.Plane(v.date)
	for k := range P {
		a, b := plane[k], want.Values[5*P+k]
		if !(a == b || a != a && b != b) {
			t.Fatalf("map pixel %d on date 5: %v, stack %v", k, a, b)
		}
	}
	// What the window draws there: the ramp's colour of the stack's value
	// on date 5 at a pixel that is not masked.
	drawn := win.Canvas().Capture()
	checked := 0
	for _, k := range []int{1 * w, 4*w + 6, P - 1} {
		val := want.Values[5*P+k]
		if val != val {
			continue
		}
		pos, ok := tsPixelPos(v, k%w, k/w)
		if !ok {
			t.Fatalf("pixel %d, %d not on the map", k%w, k/w)
		}
		abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.mapv).Add(pos)
		got := color.NRGBAModel.Convert(drawn.At(int(abs.X), int(abs.Y))).(color.NRGBA)
		// The software painter smooths the scaled raster a little: the
		// colour is within a few levels of the ramp's, and nearer to it
		// than to the colour of the same pixel on the first date.
		exp, other := v.lut.Color(val), v.lut.Color(want.Values[k])
		if d := tsColourDist(got, exp); d > 8 || d >= tsColourDist(got, other) {
			t.Fatalf("map pixel %d, %d on date 5 drawn %v, the ramp's colour of %v is %v (date 1: %v)", k%w, k/w, got, val, exp, other)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no unmasked pixel checked")
	}
	if got := v.label.Text; got[:10] != s.st.Dates[5].ISO {
		t.Fatalf("date label %q, want %s", got, s.st.Dates[5].ISO)
	}

	// A click draws the pixel's series; its fit is season's reference fit
	// of the whole stack at that pixel.
	col, row := 3, 2
	pos, ok := tsPixelPos(v, col, row)
	if !ok {
		t.Fatalf("pixel %d, %d not on the map", col, row)
	}
	t0 := time.Now()
	test.TapAt(v.mapv, pos)
	v.drawChart(480, 180)
	t.Logf("click to series drawn: %v (series %v; %d dates)", time.Since(t0), v.lastClick, n)
	r := v.series
	if r == nil || r.Col != col || r.Row != row {
		t.Fatalf("series %+v, want pixel %d, %d", r, col, row)
	}
	px := row*w + col
	masked := 0
	for ti := range n {
		a, b := r.Values[ti], float64(want.Values[ti*P+px])
		if !(a == b || a != a && b != b) {
			t.Fatalf("series date %d: %v, stack %v", ti, a, b)
		}
		if a != a {
			masked++
		}
	}
	ref := season.Ref(season.NewJob(s.fit, want))
	for j := range s.fit.Coefs {
		if got, exp := r.Coefs[j], ref.Out[2+j][px]; got != exp {
			t.Fatalf("coefficient %d: %v, reference %v", j, got, exp)
		}
	}
	for ti := range n {
		f := 0.0
		for j := range s.fit.Coefs {
			f += s.fit.X[ti*s.fit.Coefs+j] * ref.Out[2+j][px]
		}
		if r.Fitted[ti] != f {
			t.Fatalf("fitted date %d: %v, reference %v", ti, r.Fitted[ti], f)
		}
	}
	if s.mon == nil {
		t.Fatal("no monitor on a stack of 16 dates")
	}
	mref := season.Ref(season.NewJob(s.mon, want)).Out[0][px]
	if !(r.Break == mref || r.Break != r.Break && mref != mref) {
		t.Fatalf("break %v, reference %v", r.Break, mref)
	}
	t.Logf("pixel %d,%d: %d masked dates, break %s", col, row, masked, season.ISODate(r.Break))
	if r.Break != r.Break {
		t.Fatalf("the cleared pixel has no break")
	}
	img := v.drawChart(480, 180)
	if img.Bounds().Dx() != 480 {
		t.Fatal("chart not drawn")
	}
}

// tsPixelPos is a position in the map view (Fyne units) over image pixel
// col, row.
func tsPixelPos(v *timeSeriesView, col, row int) (fyne.Position, bool) {
	sz := v.mapv.Size()
	for y := float32(0.5); y < sz.Height; y++ {
		for x := float32(0.5); x < sz.Width; x++ {
			p := fyne.NewPos(x, y)
			if c, r, in := v.mapv.PixelAt(p); in && c == col && r == row {
				// the middle of the pixel, away from its edges
				return p.Add(fyne.NewPos(2, 2)), true
			}
		}
	}
	return fyne.Position{}, false
}

// tsColourDist is the largest difference of two colours' channels.
func tsColourDist(a, b color.NRGBA) int {
	d := 0
	for _, p := range [][2]uint8{{a.R, b.R}, {a.G, b.G}, {a.B, b.B}, {a.A, b.A}} {
		d = max(d, tsAbs(int(p[0])-int(p[1])))
	}
	return d
}

// TestTimeSeriesBadStack: a stack that cannot be opened is one line naming
// the problem.
func TestTimeSeriesBadStack(t *testing.T) {
	paths := writeTSStack(t, 2, 4, 3)
	missing := filepath.Join(t.TempDir(), "t_20210301.tif")
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{paths[:1], "at least two dates"},
		{[]string{paths[0], missing}, missing},
	} {
		_, err := openTSStack(context.Background(), c.paths, "ndvi")
		if err == nil {
			t.Fatalf("%v: opened", c.paths)
		}
		line := explain(err).Error()
		t.Log(line)
		if !strings.Contains(line, c.want) || strings.Contains(line, "\n") {
			t.Fatalf("%v: %q, want one line naming %q", c.paths, line, c.want)
		}
	}
}
