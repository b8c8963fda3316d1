//go:build !race

package geotiff

// slowdown stretches the decoding time budget (race_on.go); 1 in normal
// builds.
const slowdown = 1
