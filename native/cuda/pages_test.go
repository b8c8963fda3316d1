package cuda

import (
	"slices"
	"testing"
	"unsafe"
)

// Buffers that share a page are registered as one range.
func TestPageSpansSlices(t *testing.T) {
	const page = 4096
	big := make([]byte, 10<<20+page)
	other := make([]byte, 3<<20)
	off := page - int(uintptr(unsafe.Pointer(&big[0]))%page) + 100 // 100 bytes into a page
	red := big[off : off+4<<20]
	nir := big[off+4<<20 : off+8<<20] // starts in the page where red ends
	ss := PageSpans([][]byte{red, nir, other}, []int{0, 1, 2}, page)
	if len(ss) != 2 {
		t.Fatalf("%d spans, want 2 (red+nir, out): %+v", len(ss), ss)
	}
	for _, s := range ss {
		if s.Lo%page != 0 || s.Hi%page != 0 {
			t.Errorf("span %+v not page-aligned", s)
		}
		a := uintptr(unsafe.Pointer(&red[0]))
		if len(s.Members) == 2 && (s.Lo > a || s.Hi < uintptr(unsafe.Pointer(&nir[len(nir)-1]))) {
			t.Errorf("merged span %+v does not cover red and nir", s)
		}
	}
	// Apart by a page or more: two spans.
	nir2 := big[off+4<<20+2*page : off+8<<20]
	if ss := PageSpans([][]byte{red, nir2, other}, []int{0, 1}, page); len(ss) != 2 {
		t.Errorf("separate buffers merged: %+v", ss)
	}
}

// Bands that share a page are registered as one range, bands apart as
// ranges of their own, each rounded out to whole pages.
func TestPageSpansMerge(t *testing.T) {
	const page = 4096
	buf := make([]byte, 10*page)
	base := uintptr(unsafe.Pointer(&buf[0]))
	off := int((page - base%page) % page) // buf[off] starts a page
	host := [][]byte{
		buf[off+100 : off+page+50],          // pages 0-1
		buf[off+page+50 : off+2*page+10],    // pages 1-2: shares page 1
		buf[off+5*page+1 : off+6*page],      // page 5
		buf[off+3*page : off+4*page],        // page 3
		buf[off+6*page-100 : off+6*page-10], // page 5 again
	}
	got := PageSpans(host, []int{0, 1, 2, 3, 4}, page)
	lo := base + uintptr(off)
	want := []PageSpan{
		{Lo: lo, Hi: lo + 3*page, Members: []int{0, 1}},
		{Lo: lo + 3*page, Hi: lo + 4*page, Members: []int{3}},
		{Lo: lo + 5*page, Hi: lo + 6*page, Members: []int{2, 4}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d spans, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		slices.Sort(g.Members) // bands at one address come in any order
		if g.Lo != w.Lo || g.Hi != w.Hi || len(g.Members) != len(w.Members) {
			t.Errorf("span %d: [%#x, %#x) of %v, want [%#x, %#x) of %v", i, g.Lo, g.Hi, g.Members, w.Lo, w.Hi, w.Members)
			continue
		}
		for k := range w.Members {
			if g.Members[k] != w.Members[k] {
				t.Errorf("span %d: members %v, want %v", i, g.Members, w.Members)
				break
			}
		}
	}
}
