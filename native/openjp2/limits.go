package openjp2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Limits on what a header may ask OpenJPEG to set up. OpenJPEG allocates
// its per-tile coding parameters (about 5 KB a tile, and 1.1 KB more a
// tile for each component) while it reads the main header, before Canopy
// can look at it: a 226-byte file claiming millions of tiles, or 16384
// components, would make it allocate gigabytes. The header is checked here
// first, from the bytes. Real products are far inside: a Sentinel-2 band
// is one component in 121 tiles.
const (
	// MaxComponents is the most components (bands) a codestream may have.
	MaxComponents = 256
	// maxHeaderCost bounds the memory OpenJPEG's coding parameters take:
	// tiles × (tileCost + components × componentCost).
	maxHeaderCost = 128 << 20
	tileCost      = 5 << 10
	componentCost = 1200
	// maxBoxes is the most JP2 boxes walked to find the codestream.
	maxBoxes = 4096
)

// checkHeader reads the JP2 boxes (for a JP2 file) and the codestream's
// SIZ marker and refuses, with one line naming the limit, a header whose
// components or tiles would cost OpenJPEG more memory than Canopy allows.
func checkHeader(r io.ReaderAt, size int64, jp2 bool) error {
	off := int64(0)
	if jp2 {
		cs, err := findCodestream(r, size)
		if err != nil {
			return err
		}
		off = cs
	}
	// SOC (FF4F), then SIZ (FF51): Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz,
	// XTsiz, YTsiz, XTOsiz, YTOsiz, Csiz.
	var h [42]byte
	if n, err := r.ReadAt(h[:], off); n < len(h) {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("the codestream ends in its main header")
		}
		return err
	}
	be := binary.BigEndian
	if be.Uint16(h[0:]) != 0xff4f || be.Uint16(h[2:]) != 0xff51 {
		return errors.New("the codestream does not start with SOC and SIZ markers")
	}
	x1, y1 := int64(be.Uint32(h[8:])), int64(be.Uint32(h[12:]))
	x0, y0 := int64(be.Uint32(h[16:])), int64(be.Uint32(h[20:]))
	tw, th := int64(be.Uint32(h[24:])), int64(be.Uint32(h[28:]))
	tx0, ty0 := int64(be.Uint32(h[32:])), int64(be.Uint32(h[36:]))
	comps := int64(be.Uint16(h[40:]))
	if comps > MaxComponents {
		return fmt.Errorf("%d components, more than the %d Canopy reads from a JPEG 2000 band file (a Sentinel-2 band has one)", comps, MaxComponents)
	}
	if tw == 0 || th == 0 || x1 <= x0 || y1 <= y0 || tx0 > x0 || ty0 > y0 {
		return nil // OpenJPEG refuses these itself, cheaply
	}
	tiles := ((x1 - tx0 + tw - 1) / tw) * ((y1 - ty0 + th - 1) / th)
	if cost := tiles * (tileCost + comps*componentCost); tiles > maxHeaderCost/tileCost || cost > maxHeaderCost {
		return fmt.Errorf("its header asks for %d tiles of %d components, which would take the decoder %d MiB before a pixel is read (Canopy allows %d MiB): refused as damaged or hostile",
			tiles, comps, cost>>20, maxHeaderCost>>20)
	}
	return nil
}

// findCodestream walks a JP2 file's top-level boxes to the contiguous
// codestream box (jp2c) and returns where its content starts; on the way
// it checks the image header box's component count (ihdr, inside jp2h).
func findCodestream(r io.ReaderAt, size int64) (int64, error) {
	off := int64(0)
	for i := 0; i < maxBoxes && off+8 <= size; i++ {
		var b [16]byte
		n, _ := r.ReadAt(b[:], off)
		if n < 8 {
			break
		}
		l := int64(binary.BigEndian.Uint32(b[0:]))
		typ := string(b[4:8])
		hdr := int64(8)
		switch l {
		case 0:
			l = size - off
		case 1:
			if n < 16 {
				return 0, errors.New("a JP2 box ends early")
			}
			l, hdr = int64(binary.BigEndian.Uint64(b[8:])), 16
		}
		if l < hdr || l > size-off {
			return 0, fmt.Errorf("JP2 box %q at byte %d runs past the end of the file", sanitizeType(typ), off)
		}
		switch typ {
		case "jp2c":
			return off + hdr, nil
		case "jp2h":
			if err := checkJP2Header(r, off+hdr, off+l); err != nil {
				return 0, err
			}
		}
		off += l
	}
	return 0, errors.New("no codestream box (jp2c) in the JP2 file")
}

// checkJP2Header checks the ihdr box inside a jp2h box (start..end).
func checkJP2Header(r io.ReaderAt, start, end int64) error {
	for i, off := 0, start; i < maxBoxes && off+8 <= end; i++ {
		var b [22]byte
		n, _ := r.ReadAt(b[:], off)
		if n < 8 {
			return nil
		}
		l := int64(binary.BigEndian.Uint32(b[0:]))
		if string(b[4:8]) == "ihdr" && n >= 18 {
			if nc := binary.BigEndian.Uint16(b[16:]); nc > MaxComponents {
				return fmt.Errorf("%d components, more than the %d Canopy reads from a JPEG 2000 band file (a Sentinel-2 band has one)", nc, MaxComponents)
			}
			return nil
		}
		if l < 8 {
			return nil // OpenJPEG says what is wrong
		}
		off += l
	}
	return nil
}

// sanitizeType keeps a box type printable for messages.
func sanitizeType(t string) string {
	b := []byte(t)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}
