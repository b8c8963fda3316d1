package scene

import (
	"path/filepath"
	"strings"
)

// What a product looks like by its name, for the faces that gather
// scenes from folders (batch): adding a kind of product changes these
// and Open, in this package, and nothing in the faces.

// productExts are the file name endings a scene may have, in the order
// Stem trims them.
var productExts = []string{".zip", ".tar", ".SAFE", ".safe", ".tiff", ".tif", ".json"}

// IsProductDir reports whether a folder is a product itself (a .SAFE or a
// Landsat Collection 2 folder), not a folder of scenes.
func IsProductDir(p string) bool {
	if strings.HasSuffix(strings.ToUpper(strings.TrimRight(p, "/")), ".SAFE") {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(p, "*_MTL.*"))
	return len(m) > 0
}

// IsProductName reports whether a file in a folder of scenes is named as
// a scene may be: a GeoTIFF, a zip or tar, a .SAFE, a STAC item.
func IsProductName(name string) bool {
	low := strings.ToLower(name)
	for _, ext := range []string{".tif", ".tiff", ".zip", ".tar", ".safe", ".json"} {
		if strings.HasSuffix(low, ext) {
			return true
		}
	}
	return false
}

// Stem is a scene's name without its extensions (and without .SAFE):
// the name of the outputs made from it.
func Stem(p string) string {
	b := filepath.Base(strings.TrimRight(p, "/"))
	for _, ext := range productExts {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}
