package colormap

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"testing"

	"canopy/compute"
)

// streamed writes plane through a MapStream, rows in blocks of step.
func streamed(t *testing.T, plane []float32, w, h, step int, opt StreamOptions) []byte {
	t.Helper()
	var out bytes.Buffer
	m, err := NewMapStream(&out, w, h, opt)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < h; y += step {
		n := min(step, h-y)
		if err := m.WriteRows(y, n, plane[y*w:(y+n)*w]); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a valid PNG: %v", err)
	}
	return img
}

func samePicture(t *testing.T, what string, got, want image.Image) {
	t.Helper()
	if got.Bounds() != want.Bounds() {
		t.Fatalf("%s: %v, want %v", what, got.Bounds(), want.Bounds())
	}
	r := want.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if g, e := color.NRGBAModel.Convert(got.At(x, y)), color.NRGBAModel.Convert(want.At(x, y)); g != e {
				t.Fatalf("%s pixel (%d,%d): %v, want %v", what, x, y, g, e)
			}
		}
	}
}

// idats counts a PNG's IDAT chunks.
func idats(b []byte) int {
	n := 0
	for p := 8; p+8 <= len(b); {
		l := int(binary.BigEndian.Uint32(b[p:]))
		if string(b[p+4:p+8]) == "IDAT" {
			n++
		}
		p += 12 + l
	}
	return n
}

func TestStreamedMapIsEncodePNGsPicture(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		opt  PNGOptions
	}{
		{"map", 1500, 1100, PNGOptions{}},
		{"legend beside", 900, 700, PNGOptions{Legend: true, Title: "T32TQM"}},
		{"legend below", 1600, 300, PNGOptions{Legend: true}},
		{"title", 400, 500, PNGOptions{Title: "stand 12"}},
		{"classes", 700, 650, PNGOptions{Ramp: RampClasses, Legend: true}},
		{"stretch", 333, 211, PNGOptions{Ramp: RampViridis, Stretch: Stretch{Lo: 0, Hi: 0.5}}},
	} {
		plane := scene(c.w, c.h)
		var want bytes.Buffer
		if err := EncodePNG(&want, plane, c.w, c.h, c.opt); err != nil {
			t.Fatal(err)
		}
		steps := []int{1, 97, c.h}
		if testing.Short() {
			// -short is the race detector's run in make test: strips of
			// 97 rows and the whole; a row at a time in the full run.
			steps = steps[1:]
		}
		for _, step := range steps {
			got := streamed(t, plane, c.w, c.h, step, StreamOptions{PNGOptions: c.opt})
			samePicture(t, c.name, decode(t, got), decode(t, want.Bytes()))
			if c.name == "map" && idats(got) < 2 {
				t.Errorf("a %dx%d map in %d IDAT chunk: not compressed in strips", c.w, c.h, idats(got))
			}
		}
	}
}

func TestStreamedStretchFromTheValues(t *testing.T) {
	const w, h = 640, 480
	plane := scene(w, h)
	for i := range plane {
		if plane[i] == plane[i] {
			plane[i] = plane[i]*0.3 + 0.2 // a narrow range the stretch must find
		}
	}
	for _, mode := range []string{StretchMinMax, StretchPercentile} {
		st, err := StretchFor(mode, plane)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := EncodePNG(&want, plane, w, h, PNGOptions{Stretch: st, Legend: true}); err != nil {
			t.Fatal(err)
		}
		got := streamed(t, plane, w, h, 50, StreamOptions{PNGOptions: PNGOptions{Legend: true}, StretchMode: mode})
		samePicture(t, mode, decode(t, got), decode(t, want.Bytes()))
	}
}

func TestStreamedMapScaledDown(t *testing.T) {
	const w, h = 1001, 601
	plane := scene(w, h)
	got := decode(t, streamed(t, plane, w, h, 64, StreamOptions{Size: 200}))
	if b := got.Bounds(); b.Dx() != 200 || b.Dy() != 120 {
		t.Fatalf("longest side 200 of %dx%d: %v", w, h, b)
	}
	l, _ := New("", -1, 1)
	// Each map pixel is the NaN-free mean of its box of image pixels.
	for j := range 120 {
		for i := range 200 {
			var s float64
			n := 0
			for y := j * h / 120; y < (j+1)*h/120; y++ {
				for x := i * w / 200; x < (i+1)*w/200; x++ {
					if v := plane[y*w+x]; v == v {
						s += float64(v)
						n++
					}
				}
			}
			want := l.palette[IndexNaN]
			if n > 0 {
				want = l.palette[l.Index(float32(s/float64(n)))]
			}
			if g := color.NRGBAModel.Convert(got.At(i, j)); g != color.NRGBAModel.Convert(want) {
				t.Fatalf("map pixel (%d,%d): %v, want %v", i, j, g, want)
			}
		}
	}
	// The world file describes the larger pixels.
	m, _ := NewMapStream(&bytes.Buffer{}, 1000, 500, StreamOptions{Size: 100})
	g := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0}}
	wf, ok := m.WorldFile(g)
	if want := "100\n0\n0\n-100\n600050\n5299950\n"; !ok || wf != want {
		t.Errorf("world file %q, want %q", wf, want)
	}
	full, _ := NewMapStream(&bytes.Buffer{}, 1000, 500, StreamOptions{})
	if a, _ := full.WorldFile(g); a != mustWorld(g) {
		t.Errorf("full-size world file %q, WorldFile gives %q", a, mustWorld(g))
	}
}

func mustWorld(g *compute.GeoRef) string { s, _ := WorldFile(g); return s }

func TestStreamedMapErrors(t *testing.T) {
	m, err := NewMapStream(&bytes.Buffer{}, 10, 10, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteRows(2, 1, make([]float32, 10)); err == nil {
		t.Error("rows out of order accepted")
	}
	m.WriteRows(0, 5, make([]float32, 50))
	if err := m.Close(); err == nil || err.Error() != "only 5 of 10 map rows were written" {
		t.Errorf("closed early: %v", err)
	}
	if _, err := NewMapStream(&bytes.Buffer{}, 10, 10, StreamOptions{StretchMode: "sqrt"}); err == nil {
		t.Error("unknown stretch accepted")
	}
}
