package compute

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"canopy/compute/outfile"
)

// The bus rate Auto measured for a GPU backend is kept in the user's cache
// folder (os.UserCacheDir()/canopy, or $CANOPY_CACHE_DIR), keyed by the
// GPU driver's version and the GPUs it drives, so that later starts choose
// without opening the GPU: its context, made only to measure the bus and
// be dropped, cost each start of `canopy compute` a noticeable part of a
// second (docs/BENCHMARKS.md). A change of driver or GPU is a new key, and so a new measurement.
// A cache that cannot be read or written is no error: Auto measures.

// EnvCacheDir names the environment variable that overrides the folder
// Canopy keeps its measurements in; "off" keeps none.
const EnvCacheDir = "CANOPY_CACHE_DIR"

// busCacheTTL is how long a measured bus rate is trusted.
const busCacheTTL = 30 * 24 * time.Hour

// busRecord is one cached measurement.
type busRecord struct {
	Backend  string    `json:"backend"`
	Key      string    `json:"key"`
	Duplex   float64   `json:"duplex_gbps"` // both ways at once, GB/s
	Measured time.Time `json:"measured"`
}

// gpuKey identifies the GPUs and their driver (Linux: the NVIDIA driver's
// version line and its GPUs' bus addresses; Windows: each display
// adapter's name and driver version, from the registry); "" where there is
// none to read, and then nothing is cached. A variable for the tests.
var gpuKey = gpuDriverKey

// cacheDir is the folder of Canopy's measurements, "" for none.
func cacheDir() string {
	if d := os.Getenv(EnvCacheDir); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "canopy")
}

// busFile is the cache file of backend's bus under key.
func busFile(backend, key string) string {
	dir := cacheDir()
	if dir == "" || key == "" {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return filepath.Join(dir, fmt.Sprintf("bus-%s-%016x.json", backend, h.Sum64()))
}

// cachedBus returns the bus rate last measured for backend on these GPUs,
// if it is there, recent and whole.
func cachedBus(backend string) (busRecord, bool) {
	key := gpuKey()
	f := busFile(backend, key)
	if f == "" {
		return busRecord{}, false
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return busRecord{}, false
	}
	var r busRecord
	if json.Unmarshal(data, &r) != nil || r.Backend != backend || r.Key != key || !(r.Duplex > 0) || time.Since(r.Measured) > busCacheTTL || r.Measured.After(time.Now().Add(time.Hour)) {
		return busRecord{}, false
	}
	return r, true
}

// storeBus keeps a bus rate measured for backend, written through
// compute/outfile (a temporary file renamed into place), so that a reader sees a whole record or
// none. It fails silently: the next start measures again.
func storeBus(backend string, duplex float64) {
	key := gpuKey()
	f := busFile(backend, key)
	if f == "" || !(duplex > 0) {
		return
	}
	data, err := json.Marshal(busRecord{Backend: backend, Key: key, Duplex: duplex, Measured: time.Now().UTC()})
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(f), 0o755) != nil {
		return
	}
	_ = outfile.WriteFile(f, func(w *outfile.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
