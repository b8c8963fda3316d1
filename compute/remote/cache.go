package remote

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"canopy/compute"
	"canopy/compute/outfile"
)

// DefaultCacheBytes is the size limit of DefaultCache.
const DefaultCacheBytes = 4 << 30

// Cache keeps byte ranges of remote files on disk: one folder per file
// version (its URL without the query, its validator and size), one file
// per fetched range, written to a temporary name and renamed into place.
// When the folders together pass the limit, the least recently opened go
// first. Errors writing the cache are ignored: the bytes then come from
// the server again. Its methods are safe for concurrent use; several
// processes may share one folder.
type Cache struct {
	dir string
	max int64

	mu      sync.Mutex
	used    int64
	scanned bool
}

// NewCache returns a cache in dir holding at most maxBytes.
func NewCache(dir string, maxBytes int64) *Cache {
	return &Cache{dir: dir, max: maxBytes}
}

// DefaultCache is the cache in the user's cache folder:
// os.UserCacheDir()/canopy/remote, or $CANOPY_CACHE_DIR/remote, holding at
// most DefaultCacheBytes; nil when CANOPY_CACHE_DIR is "off" or there is
// no cache folder.
func DefaultCache() *Cache {
	d := os.Getenv(compute.EnvCacheDir)
	switch d {
	case "off":
		return nil
	case "":
		u, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		d = filepath.Join(u, "canopy")
	}
	return NewCache(filepath.Join(d, "remote"), DefaultCacheBytes)
}

// Dir is the cache's folder.
func (c *Cache) Dir() string { return c.dir }

// cacheMeta is what a file version's folder holds of it.
type cacheMeta struct {
	URL          string `json:"url"`
	Size         int64  `json:"size"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// cacheObject is one file version's folder.
type cacheObject struct {
	c   *Cache
	dir string

	mu  sync.Mutex
	ext []run // the ranges on disk, by offset
}

// object opens (making it when needed) the folder of a file version.
func (c *Cache) object(key string, v validator, size int64) *cacheObject {
	h := sha256.Sum256([]byte(key + "\n" + v.etag + "\n" + v.lastMod + "\n" + strconv.FormatInt(size, 10)))
	o := &cacheObject{c: c, dir: filepath.Join(c.dir, hex.EncodeToString(h[:16]))}
	meta := filepath.Join(o.dir, "meta.json")
	if _, err := os.Stat(meta); err != nil {
		if os.MkdirAll(o.dir, 0o755) != nil {
			return nil
		}
		b, _ := json.Marshal(cacheMeta{URL: key, Size: size, ETag: v.etag, LastModified: v.lastMod})
		if writeAtomic(o.dir, "meta.json", b) != nil {
			return nil
		}
	} else {
		now := time.Now()
		os.Chtimes(meta, now, now) // recently used
	}
	ents, _ := os.ReadDir(o.dir)
	for _, e := range ents {
		r, ok := parseExtent(e.Name())
		if !ok {
			continue
		}
		if st, err := e.Info(); err != nil || st.Size() != r.n || r.off+r.n > size {
			continue
		}
		o.ext = append(o.ext, r)
	}
	slices.SortFunc(o.ext, func(a, b run) int { return cmp.Compare(a.off, b.off) })
	return o
}

// latest is the version of the file at key opened last, from the
// folders' meta.json (nil when the cache holds none).
func (c *Cache) latest(key string) (*cacheObject, cacheMeta) {
	var best folder
	var bm cacheMeta
	for _, fo := range c.folders() {
		b, err := os.ReadFile(filepath.Join(fo.path, "meta.json"))
		if err != nil {
			continue
		}
		var m cacheMeta
		if json.Unmarshal(b, &m) != nil || m.URL != key || m.Size <= 0 {
			continue
		}
		if best.path == "" || fo.used.After(best.used) {
			best, bm = fo, m
		}
	}
	if best.path == "" {
		return nil, cacheMeta{}
	}
	return c.object(key, validator{bm.ETag, bm.LastModified}, bm.Size), bm
}

// parseExtent reads a range file's name, "OFFSET-LENGTH.bin".
func parseExtent(name string) (run, bool) {
	s, ok := strings.CutSuffix(name, ".bin")
	if !ok {
		return run{}, false
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return run{}, false
	}
	off, e1 := strconv.ParseInt(a, 10, 64)
	n, e2 := strconv.ParseInt(b, 10, 64)
	if e1 != nil || e2 != nil || off < 0 || n <= 0 {
		return run{}, false
	}
	return run{off, n}, true
}

// read copies what one range file holds of the file at pos into p; 0 when
// none holds pos.
func (o *cacheObject) read(p []byte, pos int64) int {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	var hit run
	for _, r := range o.ext {
		if r.off <= pos && pos < r.off+r.n && (hit.n == 0 || r.off+r.n > hit.off+hit.n) {
			hit = r
		}
	}
	o.mu.Unlock()
	if hit.n == 0 {
		return 0
	}
	fh, err := os.Open(filepath.Join(o.dir, fmt.Sprintf("%d-%d.bin", hit.off, hit.n)))
	if err != nil {
		o.forget(hit)
		return 0
	}
	defer fh.Close()
	k := min(int64(len(p)), hit.off+hit.n-pos)
	got, err := fh.ReadAt(p[:k], pos-hit.off)
	if int64(got) != k {
		o.forget(hit)
		return 0
	}
	return got
}

// readAll fills p with the file's bytes at off from the disk, reporting
// whether the range files hold all of them.
func (o *cacheObject) readAll(p []byte, off int64) bool {
	for k := 0; k < len(p); {
		got := o.read(p[k:], off+int64(k))
		if got == 0 {
			return false
		}
		k += got
	}
	return true
}

// forget drops a range file that could not be read (another process
// evicted it).
func (o *cacheObject) forget(r run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := slices.Index(o.ext, r); i >= 0 {
		o.ext = slices.Delete(o.ext, i, i+1)
	}
}

// put stores the file's bytes at off.
func (o *cacheObject) put(off int64, data []byte) {
	if o == nil || len(data) == 0 {
		return
	}
	r := run{off, int64(len(data))}
	o.mu.Lock()
	have := slices.Contains(o.ext, r)
	o.mu.Unlock()
	if have || int64(len(data)) > o.c.max/4 {
		return
	}
	if writeAtomic(o.dir, fmt.Sprintf("%d-%d.bin", off, len(data)), data) != nil {
		return
	}
	o.mu.Lock()
	i, _ := slices.BinarySearchFunc(o.ext, off, func(x run, t int64) int { return cmp.Compare(x.off, t) })
	o.ext = slices.Insert(o.ext, i, r)
	o.mu.Unlock()
	o.c.grow(int64(len(data)))
}

// writeAtomic writes name in dir through compute/outfile (a temporary
// file beside it, synced and renamed into place), so that a reader sees
// all of it or nothing, and an interrupted run leaves no partial file.
func writeAtomic(dir, name string, data []byte) error {
	return outfile.WriteFile(filepath.Join(dir, name), func(w *outfile.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// grow counts n more bytes on disk and evicts past the limit.
func (c *Cache) grow(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.scanned {
		c.used, c.scanned = 0, true
		for _, o := range c.folders() {
			c.used += o.size
		}
	} else {
		c.used += n
	}
	if c.used <= c.max {
		return
	}
	// Least recently opened first, down to 3/4 of the limit.
	fs := c.folders()
	slices.SortFunc(fs, func(a, b folder) int { return a.used.Compare(b.used) })
	c.used = 0
	for _, o := range fs {
		c.used += o.size
	}
	for _, o := range fs {
		if c.used <= c.max/4*3 {
			break
		}
		if os.RemoveAll(o.path) == nil {
			c.used -= o.size
		}
	}
}

// folder is one file version's folder: its path, bytes and last use.
type folder struct {
	path string
	size int64
	used time.Time
}

func (c *Cache) folders() []folder {
	ents, _ := os.ReadDir(c.dir)
	var out []folder
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(c.dir, e.Name())
		f := folder{path: p}
		if st, err := os.Stat(filepath.Join(p, "meta.json")); err == nil {
			f.used = st.ModTime()
		}
		files, _ := os.ReadDir(p)
		for _, x := range files {
			if st, err := x.Info(); err == nil {
				f.size += st.Size()
			}
		}
		out = append(out, f)
	}
	return out
}
