//go:build unix

// Command remotecog measures reading a forester's area out of a season of
// Cloud Optimized GeoTIFFs over HTTP: a window of N×N pixels (1000² is
// 10 × 10 km at 10 m), two bands, D dates, from a loopback server that
// adds a delay to every request (a far server's round trip), read by
// Canopy (compute/remote under compute/geotiff) and by GDAL's /vsicurl
// with TiTiler's settings (GDAL_INGESTED_BYTES_AT_OPEN=32768,
// GDAL_HTTP_MERGE_CONSECUTIVE_RANGES=YES,
// GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR), one file after another as a
// rasterio loop reads them and on 8 threads. The same server counts every
// reader's requests and bytes; the windows' pixels are compared (SHA-256
// of each window's samples). The server is a process of its own (this
// command re-run with -serve), so the CPU seconds of each reader are its
// own, not the server's. Each pass runs -runs times (3 by default; the
// caches emptied each time) and the table gives the medians, the range of
// the wall times and the load average around the runs. bench/remote-cogs
// runs it.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/remote"
)

func main() {
	dates := flag.Int("dates", 30, "dates")
	size := flag.Int("size", 4096, "side of each band's COG in pixels")
	block := flag.Int("block", 1024, "COG tile side (Earth Search's Sentinel-2 COGs: 1024)")
	win := flag.Int("window", 1000, "side of the window read")
	off := flag.Int("offset", 1500, "the window's top-left column and row")
	delay := flag.Duration("delay", 20*time.Millisecond, "added to every request by the server")
	gdal := flag.Bool("gdal", true, "also read with GDAL's /vsicurl (python3-gdal)")
	runs := flag.Int("runs", 3, "runs of each pass (medians reported)")
	parallel := flag.Int("parallel", 0, "Canopy's bound on requests in flight (0: compute/remote's default)")
	serve := flag.String("serve", "", "(internal) serve the COGs of this folder")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the readers (not the server) to this file")
	flag.Parse()
	if *profile != "" && *serve == "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "remotecog:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *serve != "" {
		if err := serveDir(*serve, *delay); err != nil {
			fmt.Fprintln(os.Stderr, "remotecog server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dates, *size, *block, *win, *off, *delay, *gdal, *runs, *parallel); err != nil {
		fmt.Fprintln(os.Stderr, "remotecog:", err)
		os.Exit(1)
	}
}

type server struct {
	files    map[string][]byte
	delay    time.Duration
	requests atomic.Int64
	bytes    atomic.Int64
}

type counting struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c counting) Write(p []byte) (int, error) {
	k, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(k))
	return k, err
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_take" {
		// The counts so far, zeroed (not a request of a reader).
		fmt.Fprintf(w, "%d %d\n", s.requests.Swap(0), s.bytes.Swap(0))
		return
	}
	s.requests.Add(1)
	time.Sleep(s.delay)
	band := filepath.Base(r.URL.Path)
	data, ok := s.files[band]
	if !ok {
		http.NotFound(w, r)
		return
	}
	// Each date is a file of its own to the readers (its own URL and
	// ETag); the bytes are shared to spare the disk.
	w.Header().Set("ETag", fmt.Sprintf(`"%x"`, sha256.Sum256([]byte(r.URL.Path))))
	http.ServeContent(counting{w, &s.bytes}, r, band, time.Unix(1717400000, 0), bytes.NewReader(data))
}

// serveDir is the server process: the .tif files of dir on a loopback
// port, whose URL it prints, until its standard input closes.
func serveDir(dir string, delay time.Duration) error {
	s := &server{files: map[string][]byte{}, delay: delay}
	for _, name := range []string{"B04.tif", "B08.tif"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		s.files[name] = b
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	fmt.Println(srv.URL)
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// take reads and zeroes the server's counts.
func take(base string) (int64, int64, error) {
	resp, err := http.Get(base + "/_take")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var n, b int64
	_, err = fmt.Fscan(resp.Body, &n, &b)
	return n, b, err
}

// band writes a w×w uint16 band that compresses as land does (smooth
// fields with noise) and converts it to a COG with GDAL.
func band(dir, name string, w, block int, seed uint64) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, 11))
	px := make([]uint16, w*w)
	for y := range w {
		for x := range w {
			field := ((x/97)*31 + (y/89)*17) % 13
			px[y*w+x] = uint16(800 + 150*field + int(seed)*300 + r.IntN(24))
		}
	}
	raw := filepath.Join(dir, name+".raw.tif")
	geo := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5200020, 0},
		GeoKeyDirectory: []uint16{1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32632}}
	if err := geotiff.WriteBands(raw, w, w, [][]uint16{px}, geo, geotiff.WriteOptions{Compression: geotiff.Deflate, TileSize: 512}); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, name+".tif")
	cmd := exec.Command("gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2",
		"-co", fmt.Sprintf("BLOCKSIZE=%d", block), "-co", "OVERVIEWS=AUTO", raw, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gdal_translate: %v: %s", err, b)
	}
	return os.ReadFile(out)
}

// pass is one reader's measure of one run.
type pass struct {
	name         string
	seconds, cpu float64
	requests     int64
	bytes        int64
	equal        string
}

func run(dates, size, block, win, off int, delay time.Duration, withGDAL bool, runs, parallel int) error {
	dir, err := os.MkdirTemp("", "remotecog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sizes := map[string]int{}
	for i, name := range []string{"B04.tif", "B08.tif"} {
		b, err := band(dir, strings.TrimSuffix(name, ".tif"), size, block, uint64(i+1))
		if err != nil {
			return err
		}
		sizes[name] = len(b)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-serve", dir, "-delay", delay.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	var base string
	if _, err := fmt.Fscanln(out, &base); err != nil {
		return fmt.Errorf("the server process: %v", err)
	}
	var urls []string
	for d := 1; d <= dates; d++ {
		for _, b := range []string{"B04.tif", "B08.tif"} {
			urls = append(urls, fmt.Sprintf("%s/2024-%02d/%s", base, d, b))
		}
	}
	fmt.Printf("%d dates × 2 bands: %d COGs of %d² uint16 (%d² tiles, DEFLATE, predictor 2, overviews; %.1f and %.1f MB), a %d² window at (%d, %d), %v added to every request by a server process of its own; %d CPUs; %d runs\n\n",
		dates, len(urls), size, block, float64(sizes["B04.tif"])/1e6, float64(sizes["B08.tif"])/1e6, win, off, off, delay, runtime.NumCPU(), runs)

	var all [][]pass
	var ref []string
	for r := 0; r < runs; r++ {
		before := loadavg()
		var ps []pass
		cacheDir := filepath.Join(dir, fmt.Sprintf("cache%d", r))
		for _, p := range []struct {
			name  string
			cache *remote.Cache
		}{{"Canopy (compute/remote), cold", nil}, {"Canopy, cold, disk cache filled", remote.NewCache(cacheDir, 4<<30)}, {"Canopy, warm disk cache", remote.NewCache(cacheDir, 4<<30)}} {
			if _, _, err := take(base); err != nil {
				return err
			}
			t0, c0 := time.Now(), cpuTime()
			sums, err := canopyRead(urls, p.cache, win, off, parallel)
			el, cpu := time.Since(t0), cpuTime()-c0
			if err != nil {
				return err
			}
			n, b, err := take(base)
			if err != nil {
				return err
			}
			eq := "reference"
			if ref == nil {
				ref = sums
			} else if eq = same(ref, sums); eq == "yes" && len(ps) == 0 {
				eq = "reference" // the reference pass of a later run
			}
			ps = append(ps, pass{p.name, el.Seconds(), cpu.Seconds(), n, b, eq})
		}
		// Where the time goes: the same windows decoded from the files on
		// disk (no network: the decoding's share), 60 goroutines as above.
		t0, c0 := time.Now(), cpuTime()
		sums, err := localRead(dir, dates, win, off)
		el, cpu := time.Since(t0), cpuTime()-c0
		if err != nil {
			return err
		}
		ps = append(ps, pass{"Canopy, the same windows from local files (decoding only)", el.Seconds(), cpu.Seconds(), 0, 0, same(ref, sums)})
		if withGDAL {
			for _, threads := range []int{1, 8} {
				if _, _, err := take(base); err != nil {
					return err
				}
				t0 := time.Now()
				sums, ver, cpu, err := gdalRead(urls, win, off, threads)
				el := time.Since(t0)
				if err != nil {
					return err
				}
				n, b, err := take(base)
				if err != nil {
					return err
				}
				name := fmt.Sprintf("GDAL %s /vsicurl, %d thread%s", ver, threads, map[bool]string{true: "", false: "s"}[threads == 1])
				ps = append(ps, pass{name, el.Seconds(), cpu.Seconds(), n, b, same(ref, sums)})
			}
		}
		fmt.Fprintf(os.Stderr, "run %d of %d: load average %s before, %s after\n", r+1, runs, before, loadavg())
		fmt.Printf("run %d: load average %s before, %s after\n", r+1, before, loadavg())
		all = append(all, ps)
	}
	fmt.Println()
	fmt.Println("| reader | seconds (median) | seconds (range) | CPU seconds (median) | requests | MB fetched | windows equal |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for i := range all[0] {
		var secs, cpus []float64
		eq := all[0][i].equal
		for _, ps := range all {
			secs, cpus = append(secs, ps[i].seconds), append(cpus, ps[i].cpu)
			if ps[i].equal != all[0][i].equal {
				eq = "no (differs between runs)"
			}
			if ps[i].requests != all[0][i].requests {
				eq += fmt.Sprintf(" (requests %d in another run)", ps[i].requests)
			}
		}
		lo, hi := slices.Min(secs), slices.Max(secs)
		p := all[0][i]
		fmt.Printf("| %s | %.2f | %.2f–%.2f | %.2f | %d | %.1f | %s |\n", p.name, median(secs), lo, hi, median(cpus), p.requests, float64(p.bytes)/1e6, eq)
	}
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadavg is the 1, 5 and 15 minute load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func same(a, b []string) string {
	if len(a) != len(b) {
		return "no"
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("no (window %d)", i)
		}
	}
	return "yes"
}

// localRead reads the windows of canopyRead from the files on disk
// (each date's band the same file), one goroutine a window.
func localRead(dir string, dates, win, off int) ([]string, error) {
	var names []string
	for range dates {
		names = append(names, "B04.tif", "B08.tif")
	}
	sums := make([]string, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Open(filepath.Join(dir, n))
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			st, _ := f.Stat()
			g, err := geotiff.NewReader(f, st.Size(), n)
			if err != nil {
				errs[i] = err
				return
			}
			p := compute.NewPlane(compute.U16, win, win)
			if errs[i] = g.ReadWindowBandsInto(off, off, off+win, off+win, []int{1}, []compute.Plane{p}); errs[i] == nil {
				h := sha256.Sum256(p.Data)
				sums[i] = hex.EncodeToString(h[:])
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return sums, nil
}

// canopyRead reads the window of every URL at once (the Client bounds
// the requests in flight), returning each window's SHA-256.
func canopyRead(urls []string, cache *remote.Cache, win, off, parallel int) ([]string, error) {
	c := remote.New(remote.Options{Cache: cache, Parallel: parallel})
	sums := make([]string, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := c.Open(context.Background(), u, nil)
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			g, err := geotiff.NewReader(f, f.Size(), f.Name())
			if err != nil {
				errs[i] = err
				return
			}
			p := compute.NewPlane(compute.U16, win, win)
			if err := g.ReadWindowBandsInto(off, off, off+win, off+win, []int{1}, []compute.Plane{p}); err != nil {
				errs[i] = err
				return
			}
			h := sha256.Sum256(p.Data) // little-endian samples, as NumPy's tobytes() on x86
			sums[i] = hex.EncodeToString(h[:])
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return sums, nil
}

const gdalScript = `
import hashlib, sys
from concurrent.futures import ThreadPoolExecutor
from osgeo import gdal
gdal.UseExceptions()
win, off, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
urls = sys.argv[4:]
def read(u):
    ds = gdal.Open('/vsicurl/' + u)
    a = ds.GetRasterBand(1).ReadAsArray(off, off, win, win)
    return hashlib.sha256(a.astype('<u2').tobytes()).hexdigest()
if threads == 1:
    sums = [read(u) for u in urls]
else:
    with ThreadPoolExecutor(threads) as ex:
        sums = list(ex.map(read, urls))
print(gdal.__version__)
for s in sums:
    print(s)
`

// gdalRead reads the same windows with GDAL's /vsicurl, TiTiler's
// settings, its caches empty (a new process).
func gdalRead(urls []string, win, off, threads int) ([]string, string, time.Duration, error) {
	args := append([]string{"-c", gdalScript, fmt.Sprint(win), fmt.Sprint(off), fmt.Sprint(threads)}, urls...)
	py := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3" // Debian's, with python3-gdal (not a pyenv's)
	}
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "GDAL_INGESTED_BYTES_AT_OPEN=32768", "GDAL_HTTP_MERGE_CONSECUTIVE_RANGES=YES",
		"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, "", 0, fmt.Errorf("python3 with GDAL: %v: %s", err, msg)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(urls)+1 {
		return nil, "", 0, fmt.Errorf("python3 with GDAL printed %d lines", len(lines))
	}
	return lines[1:], lines[0], cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}
