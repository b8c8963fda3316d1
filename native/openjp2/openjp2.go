package openjp2

/*
#cgo pkg-config: libopenjp2
#cgo CFLAGS: -O2 -std=gnu11
#include <stdlib.h>
#include "openjp2.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"io"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DefaultMaxPixels is the largest decode (pixels times components) Decode
// accepts when Options.MaxPixels is 0: 2^28, about 16384², enough for a
// 10980² Sentinel-2 band and far from what the machine's memory allows.
const DefaultMaxPixels = 1 << 28

// Info is what a codestream's main header says.
type Info struct {
	// Codec is "JP2" (a JP2 file) or "J2K" (a raw codestream).
	Codec string
	// Width and Height are the full-resolution image size in pixels.
	Width, Height int
	// Components is the number of components (bands).
	Components int
	// Precision is the bits per sample of component 0 and Signed its
	// signedness.
	Precision int
	Signed    bool
	// TileWidth and TileHeight are the nominal tile size; TilesAcross and
	// TilesDown the tile grid (1×1 for an untiled image).
	TileWidth, TileHeight  int
	TilesAcross, TilesDown int
	// Levels is the number of resolution levels (the DWT levels plus one):
	// Options.Reduce may go from 0 to Levels-1.
	Levels int

	x0, y0, tx0, ty0 int // image and tile origins on the reference grid
	same             bool
}

// Tiles returns the number of tiles.
func (i Info) Tiles() int { return i.TilesAcross * i.TilesDown }

// SampleType is how Decode stores a sample.
type SampleType uint8

// The sample types Decode stores.
const (
	U8 SampleType = iota + 1
	U16
	I16
	I32
)

// String is the type's name as GDAL writes it in lower case ("uint16").
func (t SampleType) String() string {
	switch t {
	case U8:
		return "uint8"
	case U16:
		return "uint16"
	case I16:
		return "int16"
	case I32:
		return "int32"
	}
	return fmt.Sprintf("SampleType(%d)", uint8(t))
}

// Size is the bytes of one sample.
func (t SampleType) Size() int {
	switch t {
	case U8:
		return 1
	case U16, I16:
		return 2
	case I32:
		return 4
	}
	return 0
}

// Plane is what Decode decodes: Width*Height samples of Type, row-major,
// in the machine's byte order.
type Plane struct {
	Type          SampleType
	Width, Height int
	Data          []byte
}

// Type is the sample type Decode returns: uint8 up to 8 unsigned bits,
// uint16 up to 16, int16 for signed up to 16, int32 beyond.
func (i Info) Type() SampleType {
	switch {
	case i.Precision <= 8 && !i.Signed:
		return U8
	case i.Precision <= 16 && !i.Signed:
		return U16
	case i.Precision <= 16:
		return I16
	}
	return I32
}

// Options choose what Decode decodes. The zero value decodes component 0
// of the whole image at full resolution on all cores.
type Options struct {
	// Threads is how many threads decode (0: GOMAXPROCS).
	Threads int
	// Reduce discards that many resolution levels: each halves the size
	// (rounding up), 0 is full resolution.
	Reduce int
	// Window is the region to decode in full-resolution pixels, (0, 0) at
	// the top-left pixel; empty means the whole image. At a reduced level
	// the plane covers the same ground, rounded outwards.
	Window image.Rectangle
	// Component is the component (0-based) to return.
	Component int
	// MaxPixels refuses decodes that would hold more samples than this
	// (0: DefaultMaxPixels).
	MaxPixels int64
}

// Decoder is an open JPEG 2000 codestream whose header has been read. It
// is safe for concurrent Decode calls: each call makes its own codecs.
type Decoder struct {
	r      io.ReaderAt
	size   int64
	name   string
	format C.int
	info   Info
}

var (
	jp2Magic = []byte{0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a}
	j2kMagic = []byte{0xff, 0x4f, 0xff, 0x51}
)

// Open reads the main header of the JP2 file or J2K codestream held by r,
// which is size bytes long; name is used in error messages. r must stay
// readable while the Decoder is used.
func Open(r io.ReaderAt, size int64, name string) (*Decoder, error) {
	d := &Decoder{r: r, size: size, name: name}
	var head [12]byte
	n, err := r.ReadAt(head[:], 0)
	if n < len(j2kMagic) {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("file too short")
		}
		return nil, fmt.Errorf("jpeg2000 %s: %v", name, err)
	}
	switch {
	case n == len(head) && bytes.Equal(head[:], jp2Magic):
		d.format, d.info.Codec = C.OPJ_CODEC_JP2, "JP2"
	case bytes.Equal(head[:4], j2kMagic):
		d.format, d.info.Codec = C.OPJ_CODEC_J2K, "J2K"
	default:
		return nil, fmt.Errorf("jpeg2000 %s: not a JPEG 2000 file (no JP2 signature or codestream marker)", name)
	}
	if err := checkHeader(r, size, d.format == C.OPJ_CODEC_JP2); err != nil {
		return nil, fmt.Errorf("jpeg2000 %s: %v", name, err)
	}
	c, err := d.open(1, 0)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var ci C.canopy_opj_info
	C.canopy_opj_info_get(c.o, &ci)
	d.info.Width, d.info.Height = int(ci.x1)-int(ci.x0), int(ci.y1)-int(ci.y0)
	d.info.x0, d.info.y0 = int(ci.x0), int(ci.y0)
	d.info.tx0, d.info.ty0 = int(ci.tx0), int(ci.ty0)
	d.info.Components = int(ci.ncomps)
	d.info.Precision, d.info.Signed = int(ci.prec), ci.sgnd != 0
	d.info.TileWidth, d.info.TileHeight = int(ci.tdx), int(ci.tdy)
	d.info.TilesAcross, d.info.TilesDown = int(ci.tw), int(ci.th)
	d.info.Levels = int(ci.levels)
	d.info.same = ci.same != 0
	switch {
	case d.info.Width <= 0 || d.info.Height <= 0 || d.info.Components <= 0:
		return nil, fmt.Errorf("jpeg2000 %s: empty image (%dx%d, %d components)", name, d.info.Width, d.info.Height, d.info.Components)
	case ci.dx != 1 || ci.dy != 1 || !d.info.same:
		return nil, fmt.Errorf("jpeg2000 %s: subsampled or mixed components are not supported", name)
	case d.info.Precision < 1 || d.info.Precision > 31:
		return nil, fmt.Errorf("jpeg2000 %s: %d-bit samples are not supported", name, d.info.Precision)
	case d.info.TileWidth <= 0 || d.info.TileHeight <= 0 || d.info.Tiles() <= 0 || d.info.Levels <= 0:
		return nil, fmt.Errorf("jpeg2000 %s: the header has no valid tiling", name)
	}
	return d, nil
}

// Info returns the header facts.
func (d *Decoder) Info() Info { return d.info }

// ceilPow2 is ceil(a / 2^r) for a >= 0.
func ceilPow2(a, r int) int { return (a + (1 << r) - 1) >> r }

// OutputSize returns the size of the plane Decode makes for the window
// (full image when empty) at reduction level reduce.
func (d *Decoder) OutputSize(window image.Rectangle, reduce int) (w, h int) {
	if window.Empty() {
		window = image.Rect(0, 0, d.info.Width, d.info.Height)
	}
	x0, y0 := d.info.x0+window.Min.X, d.info.y0+window.Min.Y
	x1, y1 := d.info.x0+window.Max.X, d.info.y0+window.Max.Y
	return ceilPow2(x1, reduce) - ceilPow2(x0, reduce), ceilPow2(y1, reduce) - ceilPow2(y0, reduce)
}

// Decode decodes one component of the image, or of a window of it, at the
// resolution level asked for, into a plane of Info().Type().
func (d *Decoder) Decode(opt Options) (Plane, error) {
	in := d.info
	win := opt.Window
	full := image.Rect(0, 0, in.Width, in.Height)
	if win.Empty() {
		win = full
	}
	switch {
	case !win.In(full):
		return Plane{}, fmt.Errorf("jpeg2000 %s: window %v is outside the %dx%d image", d.name, opt.Window, in.Width, in.Height)
	case opt.Reduce < 0 || opt.Reduce >= in.Levels:
		return Plane{}, fmt.Errorf("jpeg2000 %s: resolution level %d does not exist (0 to %d)", d.name, opt.Reduce, in.Levels-1)
	case opt.Component < 0 || opt.Component >= in.Components:
		return Plane{}, fmt.Errorf("jpeg2000 %s: component %d does not exist (the image has %d)", d.name, opt.Component, in.Components)
	}
	budget := opt.MaxPixels
	if budget <= 0 {
		budget = DefaultMaxPixels
	}
	ow, oh := d.OutputSize(win, opt.Reduce)
	if need := int64(ow) * int64(oh) * int64(in.Components); need > budget {
		return Plane{}, fmt.Errorf("jpeg2000 %s: decoding %dx%d×%d samples exceeds the budget of %d", d.name, ow, oh, in.Components, budget)
	}
	if need := int64(in.TileWidth) * int64(in.TileHeight) * int64(in.Components); need > budget {
		return Plane{}, fmt.Errorf("jpeg2000 %s: a %dx%d tile exceeds the budget of %d samples", d.name, in.TileWidth, in.TileHeight, budget)
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	// Reference-grid area and the output's origin at the reduced level.
	ax0, ay0 := in.x0+win.Min.X, in.y0+win.Min.Y
	ax1, ay1 := in.x0+win.Max.X, in.y0+win.Max.Y
	p := Plane{Type: in.Type(), Width: ow, Height: oh, Data: make([]byte, ow*oh*in.Type().Size())}
	job := &decodeJob{d: d, opt: opt, plane: p, out: image.Rect(ceilPow2(ax0, opt.Reduce), ceilPow2(ay0, opt.Reduce), ceilPow2(ax1, opt.Reduce), ceilPow2(ay1, opt.Reduce))}
	tiles := d.tilesIn(ax0, ay0, ax1, ay1)
	var err error
	if len(tiles) >= 2 && threads >= 2 {
		err = job.tiles(tiles, threads)
	} else {
		err = job.area(ax0, ay0, ax1, ay1, threads)
	}
	if err != nil {
		return Plane{}, err
	}
	return p, nil
}

// tilesIn lists the tiles that meet the reference-grid area.
func (d *Decoder) tilesIn(x0, y0, x1, y1 int) []int {
	in := d.info
	var t []int
	for ty := range in.TilesDown {
		for tx := range in.TilesAcross {
			r := d.tileRect(tx, ty)
			if r.Overlaps(image.Rect(x0, y0, x1, y1)) {
				t = append(t, ty*in.TilesAcross+tx)
			}
		}
	}
	return t
}

// tileRect is tile (tx, ty) on the reference grid, clipped to the image.
func (d *Decoder) tileRect(tx, ty int) image.Rectangle {
	in := d.info
	r := image.Rect(in.tx0+tx*in.TileWidth, in.ty0+ty*in.TileHeight, in.tx0+(tx+1)*in.TileWidth, in.ty0+(ty+1)*in.TileHeight)
	return r.Intersect(image.Rect(in.x0, in.y0, in.x0+in.Width, in.y0+in.Height))
}

type decodeJob struct {
	d     *Decoder
	opt   Options
	plane Plane
	out   image.Rectangle // the plane on the reduced grid
}

// copyFrom copies the part of the codec's current image (covering src on
// the reduced grid) that falls inside the plane.
func (j *decodeJob) copyFrom(c *codec, src image.Rectangle) error {
	var w, h C.uint32_t
	comp := C.uint32_t(j.opt.Component)
	if C.canopy_opj_comp(c.o, comp, &w, &h) != 0 {
		return c.err("decode")
	}
	if int(w) != src.Dx() || int(h) != src.Dy() {
		return fmt.Errorf("jpeg2000 %s: the decoder returned %dx%d samples for a %dx%d region", j.d.name, w, h, src.Dx(), src.Dy())
	}
	r := src.Intersect(j.out)
	if r.Empty() {
		return nil
	}
	size := j.plane.Type.Size()
	off := ((r.Min.Y-j.out.Min.Y)*j.plane.Width + (r.Min.X - j.out.Min.X)) * size
	C.canopy_opj_copy(c.o, comp, C.uint32_t(r.Min.X-src.Min.X), C.uint32_t(r.Min.Y-src.Min.Y),
		C.uint32_t(r.Dx()), C.uint32_t(r.Dy()), unsafe.Pointer(&j.plane.Data[off]), C.size_t(j.plane.Width), C.int(size))
	return nil
}

// area decodes the reference-grid area with one codec and OpenJPEG's own
// threads.
func (j *decodeJob) area(x0, y0, x1, y1, threads int) error {
	c, err := j.d.open(threads, j.opt.Reduce)
	if err != nil {
		return err
	}
	defer c.close()
	if C.canopy_opj_decode_area(c.o, C.int(x0), C.int(y0), C.int(x1), C.int(y1)) != 0 {
		return c.err("decode")
	}
	return j.copyFrom(c, j.out)
}

// tiles decodes the listed tiles on several workers, each with its own
// codec and stream, taking tiles in increasing order so that every
// stream only moves forward.
func (j *decodeJob) tiles(tiles []int, threads int) error {
	workers := min(threads, len(tiles))
	per := max(1, threads/workers)
	var next atomic.Int64
	var failed atomic.Bool
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	red := j.opt.Reduce
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() error {
				c, err := j.d.open(per, red)
				if err != nil {
					return err
				}
				defer c.close()
				for !failed.Load() {
					i := int(next.Add(1)) - 1
					if i >= len(tiles) {
						return nil
					}
					t := tiles[i]
					if C.canopy_opj_decode_tile(c.o, C.uint32_t(t)) != 0 {
						return c.err(fmt.Sprintf("decode tile %d", t))
					}
					r := j.d.tileRect(t%j.d.info.TilesAcross, t/j.d.info.TilesAcross)
					src := image.Rect(ceilPow2(r.Min.X, red), ceilPow2(r.Min.Y, red), ceilPow2(r.Max.X, red), ceilPow2(r.Max.Y, red))
					if err := j.copyFrom(c, src); err != nil {
						return err
					}
				}
				return nil
			}()
			if err != nil {
				failed.Store(true)
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

// codec is one OpenJPEG stream and codec over the Decoder's reader.
type codec struct {
	d   *Decoder
	o   *C.canopy_opj
	src *source
	h   cgo.Handle
}

// open makes a codec, reads the header and sets the reduction.
func (d *Decoder) open(threads, reduce int) (*codec, error) {
	o := (*C.canopy_opj)(C.calloc(1, C.sizeof_canopy_opj))
	if o == nil {
		return nil, fmt.Errorf("jpeg2000 %s: out of memory", d.name)
	}
	c := &codec{d: d, o: o, src: &source{r: d.r, size: d.size}}
	c.h = cgo.NewHandle(c.src)
	o.handle = C.uintptr_t(c.h)
	o.size = C.uint64_t(d.size)
	if C.canopy_opj_open(o, d.format, C.int(threads), C.int(reduce)) != 0 {
		err := c.err("read header")
		c.close()
		return nil, err
	}
	return c, nil
}

// err turns the codec's first error message (or a read error) into one
// line naming the file.
func (c *codec) err(what string) error {
	if c.src.err != nil {
		return fmt.Errorf("jpeg2000 %s: %s: %v", c.d.name, what, c.src.err)
	}
	msg := C.GoString(&c.o.err[0])
	if msg == "" {
		msg = "the decoder failed"
	}
	return fmt.Errorf("jpeg2000 %s: %s: %s", c.d.name, what, msg)
}

func (c *codec) close() {
	if c.o != nil {
		C.canopy_opj_close(c.o)
		C.free(unsafe.Pointer(c.o))
		c.o = nil
		c.h.Delete()
	}
}
