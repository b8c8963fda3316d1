//go:build race

package cudaback

// raceOn says the tests run under the race detector, which slows the PTX
// interpreter tenfold.
const raceOn = true
