package hostile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	stdimage "image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// pngChunk appends one PNG chunk (length, type, data, CRC).
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(append(b, typ...), data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// grayPNG is a w×h grayscale PNG of the given depth: header, a padding
// text chunk of pad bytes, and one IDAT holding raw bytes of zeros
// (uncompressed zlib), then IEND.
func grayPNG(w, h, depth, pad, raw int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, byte(depth), 0, 0, 0, 0)
	b = pngChunk(b, "IHDR", ihdr)
	if pad > 0 {
		b = pngChunk(b, "tEXt", append([]byte("Comment\x00"), make([]byte, pad)...))
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.NoCompression)
	zw.Write(make([]byte, raw))
	zw.Close()
	b = pngChunk(b, "IDAT", z.Bytes())
	return pngChunk(b, "IEND", nil)
}

func encodePNG(img stdimage.Image) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func (g *gen) pngs() {
	add := func(name string, b []byte, loads bool, want string) {
		g.add(Case{Name: name, Red: g.file(name+".png", b), Loads: loads, Want: want})
	}
	add("png/padded-16000-squared", grayPNG(16000, 16000, 8, 400<<10, 100), false, "holds only")
	add("png/16000-squared", grayPNG(16000, 16000, 8, 0, 240<<10), false, "decoding it would take")
	add("png/16000-squared-16bit", grayPNG(16000, 16000, 16, 0, 480<<10), false, "decoding it would take")
	add("png/100000-squared-tiny", grayPNG(100000, 100000, 8, 0, 100), false, "holds only")
	add("png/width-0", grayPNG(0, 10, 8, 0, 100), false, "")
	g8 := stdimage.NewGray(stdimage.Rect(0, 0, 300, 200))
	for i := range g8.Pix {
		g8.Pix[i] = byte(i)
	}
	valid := encodePNG(g8)
	add("png/gray8-valid", valid, true, "")
	g16 := stdimage.NewGray16(stdimage.Rect(0, 0, 300, 200))
	g16.SetGray16(3, 4, color.Gray16{Y: 60000})
	add("png/gray16-valid", encodePNG(g16), true, "")
	add("png/2000-squared-zeros", grayPNG(2000, 2000, 8, 0, 2000*2001), true, "")
	add("png/truncated", valid[:len(valid)/2], false, "")
	bad := append([]byte(nil), valid...)
	bad[len(bad)-20] ^= 0xff // inside the last IDAT: its CRC no longer matches
	add("png/bad-crc", bad, false, "")
	rgb := stdimage.NewRGBA(stdimage.Rect(0, 0, 4, 4))
	add("png/colour", encodePNG(rgb), false, "in colour")
	huge := pngChunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 10), 10), 8, 0, 0, 0, 0))
	huge = binary.BigEndian.AppendUint32(huge, 1<<31-1)
	huge = append(huge, "IDAT"...)
	add("png/chunk-2GiB-claimed", append(huge, make([]byte, 64)...), false, "")
}

func (g *gen) others() {
	g.bad("other/text", []byte("hello, forest\n"), "not a GeoTIFF or PNG file")
	g.bad("other/jpeg-magic", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), "not a GeoTIFF or PNG file")
	junk := make([]byte, 1024)
	for i := range junk {
		junk[i] = byte(i * 131)
	}
	g.bad("other/random-1KB", junk, "not a GeoTIFF or PNG file")
	g.bad("other/zeros-1MB", make([]byte, 1<<20), "not a GeoTIFF or PNG file")
	g.bad("other/tiff-magic-then-zeros", append([]byte("II*\x00\x08\x00\x00\x00"), make([]byte, 1<<16)...), "an image directory is empty")
	odd := filepath.Join(g.dir, "named-with-band.tif:1")
	if err := os.WriteFile(odd, base().build().bytes(), 0o644); err != nil && g.err == nil {
		g.err = err
	}
	g.add(Case{Name: "path/file-named-x.tif:1", Red: odd, Loads: true})
	g.add(Case{Name: "path/missing", Red: filepath.Join(g.dir, "missing.tif"), Want: "no such file or directory"})
	target := g.file("link-target.tif", base().build().bytes())
	link := filepath.Join(g.dir, "link.tif")
	g.symlink(target, link)
	g.add(Case{Name: "path/symlink-to-file", Red: link, Loads: true})
	loop := filepath.Join(g.dir, "loop.tif")
	g.symlink(loop, loop)
	g.add(Case{Name: "path/symlink-loop", Red: loop, Want: "too many levels of symbolic links"})
	dangling := filepath.Join(g.dir, "dangling.tif")
	g.symlink(filepath.Join(g.dir, "nowhere.tif"), dangling)
	g.add(Case{Name: "path/dangling-symlink", Red: dangling, Want: "no such file or directory"})
	sub := filepath.Join(g.dir, "a-directory.tif")
	if err := os.Mkdir(sub, 0o755); err != nil && g.err == nil {
		g.err = err
	}
	g.add(Case{Name: "path/directory", Red: sub, Want: "is a directory"})
}

func (g *gen) symlink(target, link string) {
	if err := os.Symlink(target, link); err != nil && g.err == nil {
		g.err = err
	}
}
