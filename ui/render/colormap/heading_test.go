package colormap

import (
	"bytes"
	"testing"
)

// TestWithHeading: the heading changes the legend (a longer word makes it
// at least as wide and changes pixels) and nothing else of the LUT.
func TestWithHeading(t *testing.T) {
	l, err := New(RampRdYlGn, -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := l.WithHeading("GNDVI (green)")
	if h.Color(0.3) != l.Color(0.3) || h.Range() != l.Range() {
		t.Error("the heading changed the colours")
	}
	a, b := l.Legend(1), h.Legend(1)
	if b.Rect.Dx() < a.Rect.Dx() || (a.Rect == b.Rect && bytes.Equal(a.Pix, b.Pix)) {
		t.Errorf("legend with a heading: %v against %v, same pixels", b.Rect, a.Rect)
	}
	if c := l.WithHeading("").Legend(1); c.Rect != a.Rect || !bytes.Equal(c.Pix, a.Pix) {
		t.Error("an empty heading is not NDVI's")
	}
}
