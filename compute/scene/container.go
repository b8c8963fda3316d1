package scene

import (
	"archive/tar"
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"canopy/compute/internal/infile"
	"canopy/compute/outfile"
)

// Limits that keep hostile products from making a read hang or allocate
// without bound. Real products are far inside them.
const (
	// maxXML is the largest metadata file read (MTD_TL.xml with its angle
	// grids is about 1 MB; STAC items and MTL files a few tens of kB).
	maxXML = 16 << 20
	// maxMember is the largest archive member read (a 10980² Sentinel-2
	// band is about 120 MB; a Landsat SR band about 120 MB).
	maxMember = 2 << 30
	// maxInflate is the most a zip's compressed members may take once
	// inflated, all together (members that are not stored cannot be read
	// in place: each is inflated once, however often it is read, past its
	// first MiB into a temporary file). A Sentinel-2 10 m band is about
	// 120 MB: NDVI with its mask inflates about 260 MB, a natural-colour
	// view with NDVI about 500 MB.
	maxInflate = 768 << 20
	// maxMembers is the most members an archive index holds.
	maxMembers = 100000
)

// container is where a product's files are: a folder, a zip or a tar.
// Names are slash-separated and relative to the container's root.
type container interface {
	// names lists the regular files.
	names() []string
	// open returns a member for reading in place, and its size.
	open(name string) (io.ReaderAt, int64, error)
	// where names a member in messages ("X.zip!a/b.jp2", "dir/a/b.jp2").
	where(name string) string
	close() error
}

// readSmall reads a whole member of at most limit bytes.
func readSmall(c container, name string, limit int64) ([]byte, error) {
	r, n, err := c.open(name)
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s: %d bytes is more than the %d a metadata file may have (a product's largest, MTD_TL.xml, is about 1 MB)", c.where(name), n, limit)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("%s: %v", c.where(name), err)
	}
	return b, nil
}

// find returns the members whose base name matches the glob pattern,
// ignoring case (older Sentinel-2 products name their metadata
// MTD_MSIL2a.xml), sorted.
func find(c container, pattern string) []string {
	var out []string
	pattern = strings.ToLower(pattern)
	for _, n := range c.names() {
		if ok, _ := path.Match(pattern, strings.ToLower(path.Base(n))); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// safeName reports whether an archive member name stays inside the
// archive: relative, no "..", no backslashes or drive letters.
func safeName(n string) bool {
	if n == "" || strings.ContainsAny(n, "\\\x00") || strings.HasPrefix(n, "/") || (len(n) > 1 && n[1] == ':') {
		return false
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}

// dirContainer is a product unpacked in a folder.
type dirContainer struct {
	root  string
	files []string
	set   map[string]bool // files, for the check that a name is inside
	cache fileCache
}

func openDir(root string) (*dirContainer, error) {
	d := &dirContainer{root: root}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if len(d.files) >= maxMembers {
			return fmt.Errorf("more than %d files, the most Canopy reads (a product has a few hundred)", maxMembers)
		}
		if e.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			d.files = append(d.files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", root, unwrapPath(err))
	}
	d.set = make(map[string]bool, len(d.files))
	for _, f := range d.files {
		d.set[f] = true
	}
	return d, nil
}

func (d *dirContainer) names() []string { return d.files }

// inside checks that a name the metadata gives stays inside the product
// folder: no "..", not absolute, and not a symbolic link leading out of
// it. A product reads only its own files.
func (d *dirContainer) inside(name string) error {
	if d.set[name] {
		return nil // a regular file the walk found inside
	}
	if !safeName(name) {
		return fmt.Errorf("%s: the product names %q, a file outside its folder: refused", d.root, name)
	}
	full := filepath.Join(d.root, filepath.FromSlash(name))
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil // missing: opening it says so
	}
	root, err := filepath.EvalSymlinks(d.root)
	if err != nil {
		return fmt.Errorf("%s: %v", d.root, unwrapPath(err))
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s: %s is a link to a file outside the product folder: refused", d.root, name)
	}
	return nil
}

func (d *dirContainer) open(name string) (io.ReaderAt, int64, error) {
	if err := d.inside(name); err != nil {
		return nil, 0, err
	}
	f, n, err := d.cache.open(filepath.Join(d.root, filepath.FromSlash(name)))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", d.where(name), err)
	}
	return f, n, nil
}

func (d *dirContainer) where(name string) string {
	return filepath.Join(d.root, filepath.FromSlash(name))
}

func (d *dirContainer) close() error { return d.cache.close() }

// fileCache keeps the files a scene opened, once each, until it closes.
type fileCache struct {
	mu    sync.Mutex
	files map[string]*os.File
	sizes map[string]int64
}

func (c *fileCache) open(p string) (*os.File, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.files[p]; f != nil {
		return f, c.sizes[p], nil
	}
	f, st, err := infile.Open(p)
	if err != nil {
		return nil, 0, err
	}
	if c.files == nil {
		c.files, c.sizes = map[string]*os.File{}, map[string]int64{}
	}
	c.files[p], c.sizes[p] = f, st.Size()
	return f, st.Size(), nil
}

func (c *fileCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.files {
		f.Close()
	}
	c.files, c.sizes = nil, nil
	return nil
}

// zipContainer reads a zip in place: stored members through a section of
// the file, deflated ones inflated within limits (inflater).
type zipContainer struct {
	path string
	f    *os.File
	z    *zip.Reader
	m    map[string]*zip.File
	list []string

	mu       sync.Mutex
	inflated map[string]*inflater // each compressed member's one inflater
	held     int64                // their declared sizes, within maxInflate
}

func openZip(p string) (*zipContainer, error) {
	f, st, err := infile.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	z, err := zip.NewReader(f, st.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		f.Close()
		return nil, fmt.Errorf("%s: the file is not a zip archive or it is damaged (%v)", p, err)
	}
	c := &zipContainer{path: p, f: f, z: z, m: map[string]*zip.File{}}
	if len(z.File) > maxMembers {
		f.Close()
		return nil, fmt.Errorf("%s: more than %d members, the most Canopy reads (a product has a few hundred)", p, maxMembers)
	}
	for _, zf := range z.File {
		if !safeName(zf.Name) {
			f.Close()
			return nil, fmt.Errorf("%s: member %q points outside the archive: refused", p, zf.Name)
		}
		if zf.Mode()&fs.ModeSymlink != 0 {
			f.Close()
			return nil, fmt.Errorf("%s: member %q is a symbolic link: refused", p, zf.Name)
		}
		if zf.FileInfo().IsDir() {
			continue
		}
		n := path.Clean(zf.Name)
		c.m[n] = zf
		c.list = append(c.list, n)
	}
	return c, nil
}

func (c *zipContainer) names() []string { return c.list }

func (c *zipContainer) open(name string) (io.ReaderAt, int64, error) {
	zf, ok := c.m[name]
	if !ok {
		return nil, 0, fmt.Errorf("%s: no such member", c.where(name))
	}
	size := int64(zf.UncompressedSize64)
	if zf.UncompressedSize64 > maxMember {
		return nil, 0, fmt.Errorf("%s: declares %d bytes, more than the %d Canopy reads from one member: refused", c.where(name), zf.UncompressedSize64, int64(maxMember))
	}
	if zf.Method == zip.Store {
		off, err := zf.DataOffset()
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %v", c.where(name), err)
		}
		if zf.CompressedSize64 != zf.UncompressedSize64 {
			return nil, 0, fmt.Errorf("%s: stored member with different compressed and uncompressed sizes", c.where(name))
		}
		return io.NewSectionReader(c.f, off, size), size, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if z := c.inflated[name]; z != nil {
		return z, size, nil
	}
	if c.held+size > maxInflate {
		return nil, 0, fmt.Errorf("%s: its compressed members would take %d MiB once inflated, more than the %d MiB Canopy inflates from one archive: unzip the archive and open the folder", c.where(name), (c.held+size)>>20, maxInflate>>20)
	}
	z := &inflater{f: zf, size: size, where: c.where(name)}
	if c.inflated == nil {
		c.inflated = map[string]*inflater{}
	}
	c.inflated[name] = z
	c.held += size
	return z, size, nil
}

// inflater reads a deflated zip member as an io.ReaderAt: it inflates
// from the start as far as reads reach and keeps what it inflated, so that
// reading a header costs a few kilobytes. Once a read goes past the first
// MiB (a band being decoded), the rest is inflated by a goroutine ahead of
// the readers into a temporary file with no name (spill), which reads then
// read: memory stays the first MiB and one chunk whatever the member's
// size (the declared sizes of all inflated members stay within maxInflate,
// as disk). The zip reader fails a member that inflates past its declared
// size or whose checksum is wrong.
type inflater struct {
	f     *zip.File
	size  int64
	where string

	mu    sync.Mutex
	cond  *sync.Cond
	rc    io.ReadCloser
	buf   []byte   // the first bytes inflated, at most ahead of them
	err   error    // the first inflate error
	spill *os.File // the whole member from the start, once bg is set (outfile.Scratch)
	have  int64    // bytes inflated: len(buf), or what spill holds once bg is set
	bg    bool     // the goroutine is inflating the rest into spill
}

// ahead is how far reads go before the rest is inflated in the background.
const ahead = 1 << 20

// spillChunk is how much the background inflation writes at a time.
const spillChunk = 4 << 20

func (z *inflater) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset", z.where)
	}
	z.mu.Lock()
	want := min(off+int64(len(p)), z.size)
	if want > ahead && !z.bg && z.err == nil && z.have < z.size {
		sp, err := outfile.Scratch("")
		if err != nil {
			z.err = fmt.Errorf("%s: inflating it into a temporary file: %v", z.where, err)
		} else if _, err := sp.WriteAt(z.buf, 0); err != nil {
			sp.Close()
			z.err = fmt.Errorf("%s: inflating it into a temporary file: %v", z.where, err)
		} else {
			z.spill, z.bg = sp, true
			z.cond = sync.NewCond(&z.mu)
			go z.fill()
		}
	}
	if z.bg {
		for z.have < want && z.err == nil {
			z.cond.Wait()
		}
	} else {
		for z.have < want && z.err == nil {
			if len(z.buf) == cap(z.buf) {
				nb := make([]byte, len(z.buf), min(z.size, max(want, 2*int64(cap(z.buf)), 64<<10)))
				copy(nb, z.buf)
				z.buf = nb
			}
			n, err := z.read(z.buf[len(z.buf):cap(z.buf)])
			z.buf = z.buf[:len(z.buf)+n]
			z.have = int64(len(z.buf))
			z.done(err)
		}
	}
	have, err, bg, spill := z.have, z.err, z.bg, z.spill
	z.mu.Unlock()
	if err != nil && have == z.size {
		return 0, err // the checksum or the size is wrong: none of it is trusted
	}
	if off >= have {
		if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), have-off))
	if bg {
		// What spill holds up to have is written and stays as it is.
		if _, e := spill.ReadAt(p[:k], off); e != nil {
			return 0, fmt.Errorf("%s: reading it back from its temporary file: %v", z.where, e)
		}
	} else {
		copy(p, z.buf[off:have])
	}
	if k < len(p) {
		if err != nil && have < z.size {
			return k, err
		}
		return k, io.EOF
	}
	return k, nil
}

// read inflates into b (opening the member on first use).
func (z *inflater) read(b []byte) (int, error) {
	if z.rc == nil {
		rc, err := z.f.Open()
		if err != nil {
			return 0, err
		}
		z.rc = rc
	}
	return z.rc.Read(b)
}

// done records the outcome of a read (under the lock), z.have counting the
// bytes inflated so far.
func (z *inflater) done(err error) {
	if err == io.EOF && z.have != z.size {
		err = fmt.Errorf("inflates to %d bytes but declares %d", z.have, z.size)
	}
	if err == nil && z.have == z.size && z.rc != nil {
		// All the declared bytes are in: read on to the end, where the
		// zip reader checks the checksum and the size.
		var one [1]byte
		n, e := z.rc.Read(one[:])
		for n == 0 && e == nil {
			n, e = z.rc.Read(one[:])
		}
		switch {
		case n > 0:
			err = fmt.Errorf("inflates to more than the %d bytes it declares", z.size)
		case e != io.EOF:
			err = e
		}
	}
	if err != nil && err != io.EOF && z.err == nil {
		z.err = fmt.Errorf("%s: %v", z.where, err)
	}
	if (z.err != nil || z.have == z.size) && z.rc != nil {
		z.rc.Close()
		z.rc = nil
	}
}

// fill inflates the rest of the member into spill, a chunk at a time,
// publishing each chunk under the lock once it is written.
func (z *inflater) fill() {
	chunk := make([]byte, spillChunk)
	for {
		z.mu.Lock()
		at := z.have
		stop := z.err != nil || at >= z.size
		if stop {
			z.cond.Broadcast()
			z.mu.Unlock()
			return
		}
		z.mu.Unlock()
		n, err := z.read(chunk[:min(int64(len(chunk)), z.size-at)])
		if n > 0 {
			if _, e := z.spill.WriteAt(chunk[:n], at); e != nil {
				n, err = 0, fmt.Errorf("inflating it into a temporary file: %v", e)
			}
		}
		z.mu.Lock()
		z.have = at + int64(n)
		z.done(err)
		z.cond.Broadcast()
		z.mu.Unlock()
	}
}

// close stops the inflation and frees its temporary file (the archive is
// being closed: no read is in flight).
func (z *inflater) close() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err == nil && z.have < z.size {
		z.err = fmt.Errorf("%s: the archive was closed", z.where)
	}
	if z.spill != nil {
		z.spill.Close() // a write of fill's in flight fails, and it stops
	}
	if !z.bg && z.rc != nil {
		z.rc.Close() // fill, when it runs, owns rc and closes it
		z.rc = nil
	}
	if z.cond != nil {
		z.cond.Broadcast()
	}
}

func (c *zipContainer) where(name string) string { return c.path + "!" + name }

func (c *zipContainer) close() error {
	c.mu.Lock()
	for _, z := range c.inflated {
		z.close()
	}
	c.mu.Unlock()
	return c.f.Close()
}

// tarContainer reads an uncompressed tar in place: members are contiguous,
// so an index of data offsets made in one pass serves every read.
type tarContainer struct {
	path string
	f    *os.File
	m    map[string][2]int64 // offset, size
	list []string
}

// countReader counts what archive/tar consumes, so that after Next the
// count is the member's data offset; Seek lets tar skip data cheaply.
type countReader struct {
	f   *os.File
	pos int64
}

func (r *countReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.pos += int64(n)
	return n, err
}

func (r *countReader) Seek(off int64, whence int) (int64, error) {
	p, err := r.f.Seek(off, whence)
	if err == nil {
		r.pos = p
	}
	return p, err
}

func openTar(p string) (*tarContainer, error) {
	f, st, err := infile.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err == nil && magic == [2]byte{0x1f, 0x8b} {
		f.Close()
		return nil, fmt.Errorf("%s: a gzip-compressed tar cannot be read in place; unpack it (tar xzf) or use the uncompressed .tar", p)
	}
	c := &tarContainer{path: p, f: f, m: map[string][2]int64{}}
	cr := &countReader{f: f}
	tr := tar.NewReader(cr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%s: the file is not a tar archive, or it ends early; it may be incomplete (%v)", p, err)
			}
			return nil, fmt.Errorf("%s: the file is not a tar archive or it is damaged (%v)", p, err)
		}
		if len(c.list) >= maxMembers {
			f.Close()
			return nil, fmt.Errorf("%s: more than %d members, the most Canopy reads (a product has a few hundred)", p, maxMembers)
		}
		if !safeName(h.Name) {
			f.Close()
			return nil, fmt.Errorf("%s: member %q points outside the archive: refused", p, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeDir:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			f.Close()
			return nil, fmt.Errorf("%s: member %q is a link (to %q): refused", p, h.Name, h.Linkname)
		default:
			f.Close()
			return nil, fmt.Errorf("%s: member %q is not a regular file (type %q): refused", p, h.Name, h.Typeflag)
		}
		off := cr.pos
		if h.Size < 0 || off+h.Size > st.Size() {
			f.Close()
			return nil, fmt.Errorf("%s: member %q runs past the end of the file (truncated tar)", p, h.Name)
		}
		n := path.Clean(h.Name)
		c.m[n] = [2]int64{off, h.Size}
		c.list = append(c.list, n)
	}
	return c, nil
}

func (c *tarContainer) names() []string { return c.list }

func (c *tarContainer) open(name string) (io.ReaderAt, int64, error) {
	e, ok := c.m[name]
	if !ok {
		return nil, 0, fmt.Errorf("%s: no such member", c.where(name))
	}
	return io.NewSectionReader(c.f, e[0], e[1]), e[1], nil
}

func (c *tarContainer) where(name string) string { return c.path + "!" + name }

func (c *tarContainer) close() error { return c.f.Close() }

// unwrapPath drops the *PathError wrapper, whose path the message already
// names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
