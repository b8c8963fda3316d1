// Command tiles writes the inputs of bench/warp/run: two Sentinel-2-like
// tiles, SIZE² uint16 at 10 m (DEFLATE-tiled GeoTIFF, nodata 0), one in
// UTM zone 32N and one in 33N, overlapping across 12° E at about 50.5° N
// as the tiles of the two zones do there. The values are a smooth field
// with noise, seeded, the same on every machine.
//
// With -read N it writes nothing: it times reading a.tif and b.tif in
// -out (decoded at their stored type on GOMAXPROCS cores, as canopy warp
// reads each input) N times each, in turn, and prints each time: the
// read alone, without the plans and warps canopy warp overlaps with it.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/par"
)

func main() {
	size := flag.Int("size", 10980, "tile side in pixels")
	out := flag.String("out", ".", "folder for a.tif (UTM 32N) and b.tif (UTM 33N)")
	read := flag.Int("read", 0, "time reading a.tif and b.tif in -out this many times each instead of writing them")
	flag.Parse()
	if *read > 0 {
		if err := timeReads(*out, *read); err != nil {
			fmt.Fprintln(os.Stderr, "tiles:", err)
			os.Exit(1)
		}
		return
	}
	if *size < 16 || *size > 20000 {
		fmt.Fprintln(os.Stderr, "tiles: --size must be between 16 and 20000")
		os.Exit(2)
	}
	// Tile origins (top-left corners, metres): the zone 32 tile's east
	// edge and the zone 33 tile's west edge both near 12° E; the tiles
	// keep Sentinel-2's 109.8 km side whatever the size, with the pixel
	// scaled so that a small run covers the same ground.
	res := 109800.0 / float64(*size)
	for _, t := range []struct {
		name string
		epsg uint16
		x0   float64
		seed uint64
	}{{"a.tif", 32632, 699960, 1}, {"b.tif", 32633, 199980, 2}} {
		if err := write(filepath.Join(*out, t.name), *size, t.epsg, t.x0, 5600040, res, t.seed); err != nil {
			fmt.Fprintln(os.Stderr, "tiles:", err)
			os.Exit(1)
		}
	}
}

func write(path string, n int, epsg uint16, x0, y0, res float64, seed uint64) error {
	v := make([]uint16, n*n)
	par.Blocks(n, 64, func(lo, hi int) {
		rng := rand.New(rand.NewPCG(seed, uint64(lo)))
		for y := lo; y < hi; y++ {
			for x := range n {
				f := 1500 + 900*math.Sin(float64(x)/37)*math.Cos(float64(y)/53) + 200*rng.Float64()
				v[y*n+x] = uint16(f)
			}
		}
	})
	g := &compute.GeoRef{PixelScale: []float64{res, res, 0}, Tiepoints: []float64{0, 0, 0, x0, y0, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, epsg}}
	return geotiff.WriteBands(path, n, n, [][]uint16{v}, g, geotiff.WriteOptions{NoData: "0"})
}

// timeReads reads a.tif and b.tif in dir n times each, in turn, and
// prints each read's time.
func timeReads(dir string, n int) error {
	for range n {
		for _, name := range []string{"a.tif", "b.tif"} {
			f, err := geotiff.Open(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			t, _ := f.DataType()
			p := compute.NewPlane(t, f.Width(), f.Height())
			t0 := time.Now()
			err = f.ReadRowsInto(1, 0, f.Height(), p)
			d := time.Since(t0)
			f.Close()
			if err != nil {
				return err
			}
			fmt.Printf("%s read %.1f ms\n", name, float64(d.Microseconds())/1000)
		}
	}
	return nil
}
