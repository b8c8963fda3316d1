// Package outfile writes the outputs of one run so that nothing is
// destroyed: an output never replaces an input of the run, a device, a
// FIFO, a directory or a symbolic link; two outputs of one run are never
// the same file; each output is written to a temporary file beside it
// and renamed into place only when every output of the run succeeded
// (all or none); a replaced file keeps its permission bits; and temporary
// files are removed on failure and on SIGINT or SIGTERM.
//
//	s := outfile.NewSet(inputs...)
//	defer s.Abort() // removes the temporary files unless committed
//	w, err := s.Create("ndvi.tif")
//	... encode into w ...
//	err = s.Commit()
//
// A symbolic link at an output path is refused rather than written
// through: writing through would replace whatever the link points at,
// which may be an input or a system file, and replacing the link itself
// would surprise whoever made it. Write to the target's own path instead.
//
// While a Set holds temporary files a signal handler is installed for
// SIGINT and SIGTERM: it removes every live temporary file of every Set
// and exits with status 130 or 143 (128 + the signal), as a shell reports
// a process killed by that signal. The handler is removed when no Set has
// temporary files left, so the program's own signal behaviour is back
// once the outputs are committed or aborted. A run that can stop by
// itself takes the signal instead (NotifyContext): the first one cancels
// its context and holds every commit back, so that it stops at its next
// check and removes its temporary files as it returns; a second one
// removes them and exits at once.
//
// Scratch makes the one other kind of file Canopy writes: a scratch file
// for its own use while it runs (overviews, an inflated archive member, a
// map's pixels), never an output, freed by the system however the program
// ends.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Set is the outputs of one run. Its methods are safe for concurrent use.
type Set struct {
	mu     sync.Mutex
	inputs []input
	outs   []*Writer
	done   bool // committed or aborted
}

type input struct {
	name string
	st   fs.FileInfo
}

// NewSet starts the outputs of a run that reads inputs. An input may be a
// band spec: "x.tif:1" stands for the file x.tif:1 if there is one and for
// x.tif if there is one; every file an input name can resolve to is
// protected. Inputs that do not exist are ignored (they protect nothing).
func NewSet(inputs ...string) *Set {
	s := &Set{}
	for _, in := range inputs {
		for _, p := range candidates(in) {
			if st, err := os.Stat(p); err == nil {
				s.inputs = append(s.inputs, input{p, st})
			}
		}
	}
	return s
}

// candidates is the names an input spec may stand for: itself and, when
// it ends in ":digits", the path before the band number.
func candidates(spec string) []string {
	out := []string{spec}
	if i := strings.LastIndexByte(spec, ':'); i > 0 && i < len(spec)-1 && strings.Trim(spec[i+1:], "0123456789") == "" {
		out = append(out, spec[:i])
	}
	return out
}

// Writer is one output being written: a temporary file beside its path.
// Write into it with Write, WriteAt and Seek; the Set commits or removes
// it.
type Writer struct {
	set  *Set
	path string // where it goes
	key  string // the path's identity among the set's outputs
	tmp  string
	f    *os.File
	had  bool // an existing file is replaced
}

// Write writes to the temporary file.
func (w *Writer) Write(p []byte) (int, error) { return w.f.Write(p) }

// WriteAt writes to the temporary file at off.
func (w *Writer) WriteAt(p []byte, off int64) (int, error) { return w.f.WriteAt(p, off) }

// Seek sets the offset of the next Write.
func (w *Writer) Seek(off int64, whence int) (int64, error) { return w.f.Seek(off, whence) }

// ReadAt reads back what was written (some encoders patch headers).
func (w *Writer) ReadAt(p []byte, off int64) (int, error) { return w.f.ReadAt(p, off) }

// Fd is the temporary file's descriptor, for encoders that rearrange the
// file in place (a COG writer opens room for its headers with fallocate).
func (w *Writer) Fd() uintptr { return w.f.Fd() }

// Path is the output's final path.
func (w *Writer) Path() string { return w.path }

// TempPath is the temporary file's path, for an encoder that can only
// write a file it opens by name (SQLite writes a GeoPackage so). What is
// written there is what Commit puts in place; the encoder must close its
// own handle before Commit and create no other file beside it.
func (w *Writer) TempPath() string { return w.tmp }

// Create starts the output at path: a temporary file in the same directory
// (".NAME.RANDOM.tmp", created exclusively) with the permission bits of
// the file it will replace, or 0666 less the umask for a new file. It
// refuses a path that is an input of the run (the same file, by device
// and inode, whatever the name), a symbolic link, anything but a regular
// file, and a path that is already an output of this Set.
func (s *Set) Create(path string) (*Writer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil, fmt.Errorf("write %s: the run's outputs are already committed or aborted", path)
	}
	if path == "" {
		return nil, errors.New("write: empty output path")
	}
	st, err := os.Lstat(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	perm := fs.FileMode(0o666) // the umask applies: 0666 &^ umask
	if exists {
		if err := replaceable(st); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		for _, in := range s.inputs {
			if os.SameFile(st, in.st) {
				return nil, fmt.Errorf("write %s: refusing to overwrite %s, an input of this run", path, in.name)
			}
		}
		perm = 0o600 // until it gets the replaced file's bits
	}
	key, err := identity(path)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	for _, o := range s.outs {
		if o.key == key || (exists && o.had && sameFile(o.path, st)) {
			return nil, fmt.Errorf("write %s: the same file as the output %s of this run; give each output its own path", path, o.path)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	w := &Writer{set: s, path: path, key: key, had: exists}
	for range 100 {
		var rb [6]byte
		rand.Read(rb[:])
		w.tmp = filepath.Join(dir, "."+base+"."+hex.EncodeToString(rb[:])+".tmp")
		if err = createTracked(w, perm); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, bare(err))
	}
	f := w.f
	if exists {
		if err := f.Chmod(st.Mode().Perm()); err != nil {
			w.remove()
			return nil, fmt.Errorf("write %s: %w", path, bare(err))
		}
	}
	s.outs = append(s.outs, w)
	return w, nil
}

// replaceable says why an existing path must not be replaced.
func replaceable(st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		return errors.New("is a symbolic link; refusing to write through it (write to the path it points at, or remove the link)")
	case m.IsRegular():
		return nil
	case m.IsDir():
		return syscall.EISDIR // "is a directory"
	case m&fs.ModeNamedPipe != 0:
		return errors.New("is a named pipe (FIFO), not a regular file; refusing to replace it")
	case m&fs.ModeDevice != 0:
		return errors.New("is a device, not a regular file; refusing to replace it")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a regular file; refusing to replace it")
	}
	return fmt.Errorf("is not a regular file (%v); refusing to replace it", m.Type())
}

// identity names the file path will be: its directory with symbolic links
// resolved, and its base name.
func identity(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(abs)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, base), nil
}

func sameFile(path string, st fs.FileInfo) bool {
	o, err := os.Lstat(path)
	return err == nil && os.SameFile(o, st)
}

// Commit puts every output in place, or none: it syncs and closes every
// temporary file and only when all of them succeeded renames each over
// its path. If a rename fails part-way (the disk went away, a directory
// appeared at a path), the error says which outputs were written and
// which not; the rest of the temporary files are removed. While the run
// is interrupted (NotifyContext) Commit puts nothing in place and returns
// ErrInterrupted. Commit after Commit or Abort does nothing.
func (s *Set) Commit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	var err error
	if len(s.outs) > 0 && checkInterrupted() != nil {
		err = interruptedError(s.outs[0].path)
	}
	for _, w := range s.outs {
		if err == nil {
			if e := w.f.Sync(); e != nil {
				err = fmt.Errorf("write %s: %w", w.path, bare(e))
			}
		}
		if e := w.f.Close(); e != nil && err == nil {
			err = fmt.Errorf("write %s: %w", w.path, bare(e))
		}
	}
	if err == nil {
		// A path may have changed since Create: check again, so that a
		// symlink or device put there meanwhile is not replaced.
		for _, w := range s.outs {
			if st, e := os.Lstat(w.path); e == nil {
				if e := replaceable(st); e != nil {
					err = fmt.Errorf("write %s: %w", w.path, e)
					break
				}
			}
		}
	}
	if err != nil {
		for _, w := range s.outs {
			w.remove()
		}
		return err
	}
	var written []string
	for i, w := range s.outs {
		if e := os.Rename(w.tmp, w.path); e != nil {
			var left []string
			for _, o := range s.outs[i:] {
				o.remove()
				left = append(left, o.path)
			}
			msg := "nothing was written"
			if len(written) > 0 {
				msg = "written: " + strings.Join(written, ", ")
			}
			return fmt.Errorf("write %s: %w (%s; not written: %s)", w.path, bare(e), msg, strings.Join(left, ", "))
		}
		untrack(w)
		written = append(written, w.path)
	}
	return nil
}

// Abort removes every temporary file: no output is written and every
// existing file is left as it was. It is safe to defer: after Commit it
// does nothing.
func (s *Set) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	for _, w := range s.outs {
		w.f.Close()
		w.remove()
	}
}

// remove deletes the temporary file and forgets it.
func (w *Writer) remove() {
	os.Remove(w.tmp)
	untrack(w)
}

func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
