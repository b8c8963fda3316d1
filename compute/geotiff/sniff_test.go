package geotiff

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSniff: files people mistake for GeoTIFFs are named by their magic
// numbers or their text.
func TestSniff(t *testing.T) {
	tar := make([]byte, 512)
	copy(tar[257:], "ustar\x0000")
	cases := []struct {
		head []byte
		want string
	}{
		{[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "a PNG image"},
		{[]byte("\xff\xd8\xff\xe0\x00\x10JFIF"), "a JPEG image"},
		{[]byte("\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00\x00\x14ftypjp2 "), "a JPEG 2000 image"},
		{[]byte("PK\x03\x04\x14\x00\x00\x00"), "a zip archive"},
		{[]byte("\x1f\x8b\x08\x00\x00\x00"), "gzip"},
		{tar, "a tar archive"},
		{[]byte("%PDF-1.7\n"), "a PDF document"},
		{[]byte("SQLite format 3\x00\x10\x00"), "an SQLite database"},
		{[]byte("this is not an image\n"), "text"},
		{[]byte("\xef\xbb\xbf<?xml version=\"1.0\"?><n1:Level-2A_User_Product"), "an XML file"},
		{[]byte("  {\"type\": \"Feature\", \"stac_version\": \"1.0.0\""), "a JSON file"},
		{[]byte("<!DOCTYPE html>\n<html><head>"), "an HTML page"},
		{[]byte("<HTML><BODY>403 Forbidden"), "an HTML page"},
		{[]byte("version https://git-lfs.github.com/spec/v1\noid sha256:"), "a Git LFS pointer"},
		{[]byte("\x00\x01\x02\x03\x04\x05\x06\x07"), ""},
	}
	for _, c := range cases {
		got := Sniff(c.head)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("Sniff(% x...) = %q, want %q", c.head[:min(8, len(c.head))], got, c.want)
		}
	}
}

// TestOpenNotTIFF opens files the project did not make (the Go
// distribution's own test images and archives, and this very file) and
// checks the one line says what each seems to be.
func TestOpenNotTIFF(t *testing.T) {
	root := build.Default.GOROOT
	self, _ := filepath.Abs("sniff_test.go")
	cases := []struct{ path, want string }{
		{filepath.Join(root, "src/image/testdata/video-001.png"), "not a TIFF file: it seems to be a PNG image (starts with 89 50 4e 47)"},
		{filepath.Join(root, "src/image/testdata/video-001.jpeg"), "it seems to be a JPEG image"},
		{filepath.Join(root, "src/image/testdata/video-001.gif"), "it seems to be a GIF image"},
		{filepath.Join(root, "src/archive/zip/testdata/readme.zip"), "it seems to be a zip archive"},
		{self, "it seems to be text (starts with 70 61 63 6b)"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			t.Fatalf("the Go distribution's test file is missing: %v", err)
		}
		_, err := Open(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s) = %v, want %q", filepath.Base(c.path), err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s): more than one line: %q", filepath.Base(c.path), err)
		}
	}
}
