// Package backends enables every backend Canopy ships: importing it
// registers go, go-parallel, c, gl and cuda with the compute package. The
// CLI and the GUI import it; the engine itself does not depend on any GPU.
package backends

import (
	"canopy/compute"

	_ "canopy/compute/cback"    // c
	_ "canopy/compute/cudaback" // cuda
	_ "canopy/compute/glback"   // gl
	_ "canopy/compute/goback"   // go, go-parallel
)

// All returns a fresh instance of every registered backend in canonical
// order (go, go-parallel, c, gl, cuda).
func All() []compute.Backend {
	var bs []compute.Backend
	for _, n := range compute.Names() {
		b, err := compute.New(n)
		if err == nil {
			bs = append(bs, b)
		}
	}
	return bs
}
