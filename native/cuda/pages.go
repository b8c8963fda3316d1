package cuda

import (
	"slices"
	"unsafe"
)

// PageSpan is a page-rounded host range [Lo, Hi) and the buffers it holds
// (their indices).
type PageSpan struct {
	Lo, Hi  uintptr
	Members []int
}

// PageSpans rounds the buffers idx of host out to whole pages and merges
// those that share a page, in address order: the driver page-locks whole
// pages (HostRegister), and two registrations may not overlap (two bands
// may be halves of one slice).
func PageSpans(host [][]byte, idx []int, page uintptr) []PageSpan {
	var ss []PageSpan
	for _, i := range idx {
		b := host[i]
		a := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		ss = append(ss, PageSpan{Lo: a &^ (page - 1), Hi: (a + uintptr(len(b)) + page - 1) &^ (page - 1), Members: []int{i}})
	}
	slices.SortFunc(ss, func(x, y PageSpan) int {
		switch {
		case x.Lo < y.Lo:
			return -1
		case x.Lo > y.Lo:
			return 1
		}
		return 0
	})
	var out []PageSpan
	for _, s := range ss {
		if k := len(out) - 1; k >= 0 && s.Lo < out[k].Hi {
			out[k].Hi = max(out[k].Hi, s.Hi)
			out[k].Members = append(out[k].Members, s.Members...)
			continue
		}
		out = append(out, s)
	}
	return out
}
