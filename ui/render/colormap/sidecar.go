package colormap

import (
	"bufio"
	"fmt"
	"html"
	"strings"

	"canopy/compute"
	"canopy/compute/geo"
)

// PRJPath returns the .prj name of a picture: the extension replaced
// (map.png -> map.prj), as ESRI's world-file convention has it.
func PRJPath(pngPath string) string {
	return pngPath[:len(pngPath)-len(extOf(pngPath))] + ".prj"
}

// AuxPath returns the GDAL auxiliary file of a picture: map.png.aux.xml.
func AuxPath(pngPath string) string { return pngPath + ".aux.xml" }

func extOf(p string) string {
	i := strings.LastIndexAny(p, "./\\")
	if i < 0 || p[i] != '.' {
		return ""
	}
	return p[i:]
}

// AuxXML returns a GDAL PAM auxiliary file (.aux.xml) that gives a
// picture the CRS whose WKT is wkt: GDAL, and QGIS through it, read the
// CRS of a PNG from there (a .prj beside a PNG is for ESRI's tools).
func AuxXML(wkt string) string {
	return "<PAMDataset>\n  <SRS>" + html.EscapeString(wkt) + "</SRS>\n</PAMDataset>\n"
}

// WriteSidecars writes what places the picture at pngPath, whose pixels
// are the raster's, on the ground: its world file (WorldFilePath) when g
// places pixels, and, when PROJ knows g's CRS, a .prj (PRJPath, ESRI WKT)
// and a GDAL .aux.xml (AuxPath). It returns the paths written; a CRS
// PROJ does not know is not an error (the world file alone is written).
// Each file is written under a temporary name and renamed.
func WriteSidecars(pngPath string, g *compute.GeoRef) ([]string, error) {
	wf, ok := WorldFile(g)
	if !ok {
		return nil, nil
	}
	type file struct{ path, text string }
	files := []file{{WorldFilePath(pngPath), wf}}
	if c, err := geo.Of(g); err == nil {
		if c.ESRIWKT != "" {
			files = append(files, file{PRJPath(pngPath), c.ESRIWKT + "\n"})
		}
		if c.WKT != "" {
			files = append(files, file{AuxPath(pngPath), AuxXML(c.WKT)})
		}
	}
	var done []string
	for _, f := range files {
		if err := writeAtomic(f.path, func(w *bufio.Writer) error { _, err := w.WriteString(f.text); return err }); err != nil {
			return done, fmt.Errorf("write %s: %w", f.path, err)
		}
		done = append(done, f.path)
	}
	return done, nil
}
