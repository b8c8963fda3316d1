// Command season times compute/season's per-pixel models on Canopy's
// backends over one cube and writes the cube for the peers (peers.py:
// NumPy, numba; the GPU helper's CuPy) to time the same models on: a
// random cube of P pixels × T dates (seasontest.Cube: seasonal curves,
// trends, noise, breaks in a third of the pixels, a share of the dates
// missing), and three models: the harmonic fit (K harmonics, no trend) with
// its RMSE over every date, the median composite of every date, and the
// MOSUM monitor (3 harmonics and a trend fitted on the first three
// quarters of the dates, the last quarter monitored, h = 0.25, α = 0.05).
// Each run is timed best and median of -repeat after one untimed run, and
// checked against the float64 reference on a sample of pixels. One JSON
// object per line on stdout.
//
//	go run ./bench/season -pixels 262144 -dates 48 -harmonics 6 -out DIR
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"canopy/compute"
	_ "canopy/compute/backends"
	"canopy/compute/geotiff"
	"canopy/compute/par"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

type result struct {
	Peer      string  `json:"peer"`
	Model     string  `json:"model"`
	Pixels    int     `json:"pixels"`
	Dates     int     `json:"dates"`
	Harmonics int     `json:"harmonics"`
	Threads   int     `json:"threads"`
	BestMS    float64 `json:"best_ms"`
	MedianMS  float64 `json:"median_ms"`
	// Rate is pixel series per second at the best time.
	Rate float64 `json:"series_per_s"`
	// MaxErr is the largest |error| of the first output plane against the
	// float64 reference over the sample, in units of its bound.
	MaxErr float64 `json:"max_err_bounds"`
}

func main() {
	pixels := flag.Int("pixels", 1<<18, "pixels of the cube")
	dates := flag.Int("dates", 48, "dates of the cube (a year and a third of them, about every 10 days)")
	harm := flag.Int("harmonics", 6, "harmonics of the harmonic fit")
	gap := flag.Float64("gap", 0.3, "share of the values missing")
	repeat := flag.Int("repeat", 5, "timed runs of each")
	backends := flag.String("backends", "go-parallel,c", "Canopy's backends to time")
	models := flag.String("models", "harmonic,median,mosum", "models to time")
	out := flag.String("out", "", "write the cube (cube.f32, date-major float32), its dates (dates.txt) and each model's first output plane from the first backend (MODEL.f32) here for peers.py")
	cogs := flag.String("cogs", "", "instead: write a stack of -dates two-band (red, nir) uint16 COGs of -side² pixels here, named s_YYYYMMDD.tif, for the end-to-end run of canopy monitor")
	side := flag.Int("side", 2048, "with -cogs: the side in pixels")
	flag.Parse()
	if *cogs != "" {
		must(writeCOGs(*cogs, *side, *dates, *gap))
		return
	}

	from, to := 2020.0, 2020.0+float64(*dates)/36
	split := from + 0.75*(to-from)
	cube := seasontest.Cube(1, *dates, *pixels, from, to, split, *gap)
	all := season.Period{From: from, To: to}
	ms := map[string]season.Model{
		"harmonic": {Kind: season.Harmonic, Harmonics: *harm, History: all},
		"median":   {Kind: season.Composite, Stat: season.Median, Period: all},
		"mosum":    season.DefaultMosum(season.Period{From: from, To: split}, season.Period{From: split, To: math.Inf(1)}),
	}
	if *out != "" {
		must(os.MkdirAll(*out, 0o755))
		must(writeF32(filepath.Join(*out, "cube.f32"), cube.Values))
		var b strings.Builder
		for _, d := range cube.Dates {
			fmt.Fprintf(&b, "%.17g\n", d)
		}
		fmt.Fprintf(&b, "# pixels %d harmonics %d split %.17g\n", *pixels, *harm, split)
		must(os.WriteFile(filepath.Join(*out, "dates.txt"), []byte(b.String()), 0o644))
	}
	enc := json.NewEncoder(os.Stdout)
	for bi, name := range strings.Split(*backends, ",") {
		b, err := compute.New(name)
		must(err)
		if !season.Runs(b) {
			fmt.Fprintf(os.Stderr, "season: %s does not run per-pixel models; skipped\n", name)
			continue
		}
		for _, mn := range strings.Split(*models, ",") {
			m, ok := ms[mn]
			if !ok {
				must(fmt.Errorf("unknown model %q", mn))
			}
			plan, err := season.NewPlan(m, cube.Dates)
			must(err)
			j := season.NewJob(plan, cube)
			if _, err := season.RunJob(b, j); err != nil { // untimed: pools, caches
				must(err)
			}
			var times []time.Duration
			for range *repeat {
				tm, err := season.RunJob(b, j)
				must(err)
				times = append(times, tm.Kernel)
			}
			slices.Sort(times)
			best := times[0].Seconds()
			r := result{Peer: "canopy " + name, Model: mn, Pixels: *pixels, Dates: *dates, Harmonics: m.Harmonics, Threads: threads(b),
				BestMS: best * 1e3, MedianMS: times[len(times)/2].Seconds() * 1e3, Rate: float64(*pixels) / best, MaxErr: sampleErr(j)}
			must(enc.Encode(r))
			if bi == 0 && *out != "" {
				must(writeF32(filepath.Join(*out, mn+".f32"), j.Out[0]))
			}
		}
		b.Close()
	}
}

func threads(b compute.Backend) int {
	if b.Name() == compute.NameGo {
		return 1
	}
	return par.DefaultThreads()
}

// sampleErr checks 4096 pixels of the job against the float64 reference:
// the largest |error| of the first plane (the monitor's magnitude) over its
// bound (seasontest).
func sampleErr(j *season.Job) float64 {
	P := j.Cube.Pixels
	n := min(P, 4096)
	T := len(j.Cube.Dates)
	sub := season.Cube{Dates: j.Cube.Dates, Pixels: n, Values: make([]float32, T*n)}
	for t := range T {
		copy(sub.Values[t*n:(t+1)*n], j.Cube.Values[t*P:t*P+n])
	}
	sj := season.NewJob(j.Plan, sub)
	for i := range sj.Out {
		copy(sj.Out[i], j.Out[i][:n])
	}
	r := season.Ref(sj)
	plane := 0
	if j.Plan.Model.Kind == season.Mosum {
		plane = 1 // the magnitude
	}
	worst := 0.0
	for px := range n {
		g, w := float64(sj.Out[plane][px]), r.Out[plane][px]
		if math.IsNaN(g) || math.IsNaN(w) {
			continue
		}
		worst = max(worst, math.Abs(g-w)/seasontest.Tolerance(sj, r, px))
	}
	return worst
}

// writeCOGs writes the end-to-end stack: n dates about every 10 days from
// 2020-01-01, red and NIR as Sentinel-2 stores them (reflectance × 10000,
// 0 nodata) with NDVI on a seasonal curve per pixel, a clear-cut in a
// corner from the last sixth, clouds as nodata over a share gap of each
// date's rows.
func writeCOGs(dir string, side, n int, gap float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	geo := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5300000, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632}}
	d0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	red, nir := make([]uint16, side*side), make([]uint16, side*side)
	for i := range n {
		d := d0.AddDate(0, 0, 10*i)
		ph := season.DecimalYear(d)
		cloud0 := int(float64(side) * math.Mod(0.37*float64(i), 1))
		cloud1 := cloud0 + int(gap*float64(side))
		par.For(side, func(y int) {
			for x := range side {
				k := y*side + x
				z := uint64(k)<<16 | uint64(i) // splitmix64: uniform, independent between dates
				z += 0x9e3779b97f4a7c15
				z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
				z = (z ^ z>>27) * 0x94d049bb133111eb
				z ^= z >> 31
				noise := float64(z>>11)/(1<<53) - 0.5
				ndvi := 0.5 + 0.25*math.Cos(2*math.Pi*(ph-0.5-0.1*float64(x%7)/7)) + 0.04*noise
				if i >= 5*n/6 && x < side/4 && y < side/4 {
					ndvi -= 0.4
				}
				r := 300 + float64((x*7+y*3)%400)
				red[k], nir[k] = uint16(r), uint16(r*(1+ndvi)/(1-ndvi))
				if (y >= cloud0 && y < cloud1) || (cloud1 > side && y < cloud1-side) {
					red[k], nir[k] = 0, 0
				}
			}
		})
		p := filepath.Join(dir, "s_"+d.Format("20060102")+".tif")
		if err := geotiff.WriteBands(p, side, side, [][]uint16{red, nir}, geo, geotiff.WriteOptions{NoData: "0", Descriptions: []string{"red", "nir"}, TileSize: 512}); err != nil {
			return err
		}
	}
	return nil
}

func writeF32(path string, v []float32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := binary.Write(f, binary.LittleEndian, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "season:", err)
		os.Exit(1)
	}
}
