package openjp2

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// SIZ builds a J2K main header: SOC, SIZ with the given image and tile
// sizes and components (8-bit, unsubsampled), COD, QCD and EOC: what a
// hostile header needs and no more.
func SIZ(w, h, tw, th uint32, comps uint16) []byte {
	be := binary.BigEndian
	b := []byte{0xff, 0x4f, 0xff, 0x51}
	b = be.AppendUint16(b, uint16(38+3*int(comps)))
	b = be.AppendUint16(b, 0)
	for _, v := range []uint32{w, h, 0, 0, tw, th, 0, 0} {
		b = be.AppendUint32(b, v)
	}
	b = be.AppendUint16(b, comps)
	for range comps {
		b = append(b, 7, 1, 1)
	}
	b = append(b, 0xff, 0x52, 0, 12, 0, 0, 0, 1, 0, 5, 4, 4, 0, 0) // COD: 5 levels
	b = append(b, 0xff, 0x5c, 0, 4, 0x40, 0x48)                    // QCD: no quantisation
	return append(b, 0xff, 0xd9)
}

// jp2Wrap puts a codestream in a JP2 file with an ihdr saying nc
// components.
func jp2Wrap(cs []byte, w, h uint32, nc uint16) []byte {
	be := binary.BigEndian
	box := func(typ string, body []byte) []byte {
		return append(append(be.AppendUint32(nil, uint32(8+len(body))), typ...), body...)
	}
	ihdr := be.AppendUint32(be.AppendUint32(nil, h), w)
	ihdr = append(be.AppendUint16(ihdr, nc), 7, 7, 0, 0)
	colr := []byte{1, 0, 0, 0, 0, 0, 17}
	var b bytes.Buffer
	b.Write(jp2Magic)
	b.Write(box("ftyp", []byte("jp2 \x00\x00\x00\x00jp2 ")))
	b.Write(box("jp2h", append(box("ihdr", ihdr), box("colr", colr)...)))
	b.Write(box("jp2c", cs))
	return b.Bytes()
}

// TestHostileHeaders: headers that would make OpenJPEG allocate
// gigabytes while reading them are refused first, from their bytes.
func TestHostileHeaders(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"j2k-million-tiles", SIZ(1<<30, 1<<30, 1, 1<<10, 1), "tiles"},
		{"jp2-million-tiles", jp2Wrap(SIZ(65535, 65535, 64, 64, 1), 65535, 65535, 1), "tiles"},
		{"j2k-16384-components", SIZ(1024, 1024, 1024, 1024, 16384), "16384 components"},
		{"jp2-16384-components-ihdr", jp2Wrap(SIZ(1024, 1024, 1024, 1024, 1), 1024, 1024, 16384), "16384 components"},
		{"jp2-box-past-end", append(jp2Magic, 0, 0, 0x10, 0, 'j', 'p', '2', 'h'), "runs past the end"},
		{"jp2-no-codestream", jp2Magic, "no codestream box"},
		{"j2k-cut-in-siz", SIZ(64, 64, 64, 64, 1)[:20], "ends in its main header"},
	} {
		_, err := Open(bytes.NewReader(c.b), int64(len(c.b)), c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s (%d bytes): %v, want an error naming the file and saying %q", c.name, len(c.b), err, c.want)
		}
	}
	// An honest header of the same shape as a Sentinel-2 band passes.
	b := SIZ(10980, 10980, 1024, 1024, 1)
	if err := checkHeader(bytes.NewReader(b), int64(len(b)), false); err != nil {
		t.Errorf("a Sentinel-2 shaped header: %v", err)
	}
}
