//go:build race

package geotiff

// slowdown stretches the decoding time budget in builds with the race
// detector, which runs the decoders 5 to 20 times slower: the budget is
// for hostile files, not for instrumented code.
const slowdown = 20
