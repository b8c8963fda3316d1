package ui

import (
	"fmt"
	"os"

	"canopy/ui/render/colormap"
)

// exportInputs are the files the window's data comes from (the source
// shown, every file of a product, and the after date of two dates): an
// export never writes over them. Taken on the event goroutine, with the
// rest of what a writer captures.
func (w *window) exportInputs() []string {
	in := w.src.inputFiles()
	if r := w.twoCurrent(); r != nil {
		in = append(in, r.on.src.inputFiles()...)
		in = append(in, r.after.src.inputFiles()...)
	}
	return in
}

// refuseInput says why an export to path must not be written: path, or a
// file written beside it (a world file, .prj, .aux.xml), is one of the
// inputs (the same file, whatever its name). The writers then put the
// file in place through compute/outfile (never through a link, a FIFO or
// a device, all or none).
func refuseInput(path string, inputs []string) error {
	for _, p := range []string{path, colormap.WorldFilePath(path), colormap.PRJPath(path), colormap.AuxPath(path)} {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, in := range inputs {
			if is, err := os.Stat(in); err == nil && os.SameFile(st, is) {
				return fmt.Errorf("write %s: refusing to overwrite %s, an input of what is shown", path, in)
			}
		}
	}
	return nil
}
