package source

import (
	"fmt"
	"io"

	"canopy/compute/geotiff"
	"canopy/compute/pipeline"
)

// COG is the sink that writes a run's indices as a Cloud Optimized
// GeoTIFF: one float32 band per index, named after it, GDAL_NODATA nan,
// the grid's georeferencing, tiled, compressed and with overviews. Every
// face writes its GeoTIFF through it (the terminal's `compute --tif` and
// `batch`, the window's Export GeoTIFF), so the same indices over the same
// grid give the same file, byte for byte, whoever writes it.
type COG struct {
	w    *geotiff.COGWriter
	path string
}

// NewCOG starts a COG of the indices names over grid g in out (an
// outfile.Writer or any file that can be read back), named path in
// messages; comp is its compression and scratch the folder for its
// overviews until Close ("" for out's own).
func NewCOG(out io.WriterAt, path string, g Grid, names []string, comp geotiff.Compression, scratch string) (*COG, error) {
	c, err := geotiff.NewCOG(out, g.Width, g.Height, len(names), g.Geo, geotiff.COGOptions{Compression: comp, Descriptions: names, ScratchDir: scratch})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &COG{w: c, path: path}, nil
}

// Write adds a block's rows of every index.
func (c *COG) Write(b *pipeline.Block) error {
	return c.WriteRows(b.Y0, b.Rows, b.Out)
}

// WriteRows adds rows [y0, y0+rows) of every index (planes[i] holds
// rows × width samples): how a face that holds the planes whole (the
// window's map) writes them; the file does not depend on how the rows
// are cut.
func (c *COG) WriteRows(y0, rows int, planes [][]float32) error {
	if err := c.w.WriteRows(y0, rows, planes); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	return nil
}

// Close lays the file out (headers, overviews).
func (c *COG) Close() error {
	if err := c.w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	return nil
}

// Abort drops what was written.
func (c *COG) Abort() { c.w.Abort() }
