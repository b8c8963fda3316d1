package openjp2

/*
#include <stdint.h>
#include <stddef.h>
*/
import "C"

import (
	"errors"
	"io"
	"runtime/cgo"
	"unsafe"
)

// source is the Go end of one OpenJPEG stream: a position over a ReaderAt.
type source struct {
	r         io.ReaderAt
	size, pos int64
	err       error // a read error other than the end of the data
}

//export canopyOpjRead
func canopyOpjRead(buf unsafe.Pointer, n C.size_t, h C.uintptr_t) C.size_t {
	s := cgo.Handle(h).Value().(*source)
	if s.pos >= s.size || n == 0 {
		return ^C.size_t(0)
	}
	want := min(int64(n), s.size-s.pos)
	got, err := s.r.ReadAt(unsafe.Slice((*byte)(buf), want), s.pos)
	s.pos += int64(got)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	if got == 0 {
		return ^C.size_t(0)
	}
	return C.size_t(got)
}

//export canopyOpjSkip
func canopyOpjSkip(n C.int64_t, h C.uintptr_t) C.int64_t {
	s := cgo.Handle(h).Value().(*source)
	p := s.pos + int64(n)
	if p < 0 {
		return -1
	}
	s.pos = p
	return n
}

//export canopyOpjSeek
func canopyOpjSeek(n C.int64_t, h C.uintptr_t) C.int {
	s := cgo.Handle(h).Value().(*source)
	if n < 0 {
		return 0
	}
	s.pos = int64(n)
	return 1
}
