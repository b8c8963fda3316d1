package geotiff

import (
	"bytes"
	"unicode/utf8"
)

// magic is a file kind known by how its bytes begin.
type magic struct {
	at   int    // offset of the signature
	sig  string // the signature
	kind string // what the file seems to be, in words
}

// magics are the signatures of files people mistake for GeoTIFFs (the
// rasters, archives and documents that sit beside them), most specific first.
var magics = []magic{
	{0, "\x89PNG\r\n\x1a\n", "a PNG image"},
	{0, "\xff\xd8\xff", "a JPEG image"},
	{0, "\x00\x00\x00\x0cjP  \r\n\x87\n", "a JPEG 2000 image (.jp2)"},
	{0, "\xff\x4f\xff\x51", "a JPEG 2000 codestream (.j2k)"},
	{0, "GIF87a", "a GIF image"},
	{0, "GIF89a", "a GIF image"},
	{8, "WEBP", "a WebP image"},
	{0, "PK\x03\x04", "a zip archive (a Sentinel-2 .zip is opened with --scene)"},
	{0, "PK\x05\x06", "an empty zip archive"},
	{0, "\x1f\x8b", "a gzip-compressed file (decompress it first)"},
	{0, "BZh", "a bzip2-compressed file (decompress it first)"},
	{0, "\xfd7zXZ\x00", "an xz-compressed file (decompress it first)"},
	{0, "7z\xbc\xaf\x27\x1c", "a 7-Zip archive"},
	{0, "\x28\xb5\x2f\xfd", "a zstd-compressed file (decompress it first)"},
	{257, "ustar", "a tar archive (a Landsat .tar is opened with --scene)"},
	{0, "%PDF", "a PDF document"},
	{0, "SQLite format 3\x00", "an SQLite database (a GeoPackage?)"},
	{0, "\x89HDF\r\n\x1a\n", "an HDF5 file"},
	{0, "CDF\x01", "a NetCDF file"},
	{0, "CDF\x02", "a NetCDF file"},
	{0, "EHFA_HEADER_TAG", "an ERDAS Imagine file (.img)"},
	{0, "\x7fELF", "a program (ELF executable)"},
}

// sniffLen is how many leading bytes Sniff looks at.
const sniffLen = 512

// Sniff says in words what a file that is not a TIFF seems to be, from
// its first bytes (up to sniffLen): "a PNG image", "a zip archive", "an
// HTML page", "text", ...; "" when nothing is recognised.
func Sniff(head []byte) string {
	for _, m := range magics {
		if len(head) >= m.at+len(m.sig) && string(head[m.at:m.at+len(m.sig)]) == m.sig {
			if m.sig == "WEBP" && string(head[:4]) != "RIFF" {
				continue
			}
			return m.kind
		}
	}
	t := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	t = bytes.TrimLeft(t, " \t\r\n")
	lower := bytes.ToLower(t[:min(len(t), 64)])
	switch {
	case bytes.HasPrefix(lower, []byte("<!doctype html")), bytes.HasPrefix(lower, []byte("<html")):
		return "an HTML page (a download that returned a web page instead of the file?)"
	case bytes.HasPrefix(lower, []byte("<?xml")):
		return "an XML file"
	case !isText(t):
		return ""
	case bytes.HasPrefix(t, []byte("{")), bytes.HasPrefix(t, []byte("[")):
		return "a JSON file"
	case bytes.HasPrefix(lower, []byte("version https://git-lfs")):
		return "a Git LFS pointer (the file itself was never downloaded)"
	case bytes.HasPrefix(t, []byte("<")):
		return "an XML or HTML file"
	default:
		return "text"
	}
}

// isText reports whether b reads as UTF-8 text without control characters
// other than white space (a cut rune at the end is allowed).
func isText(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				return true
			}
			return false
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return false
		}
		i += n
	}
	return true
}
