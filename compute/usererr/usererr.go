// Package usererr says what an error means in the words of the person
// using Canopy: one line that names the file and the problem ("out.tif:
// the folder is read-only; choose another place"), in place of the
// system's ("open .out.tif.1a2b3c.tmp: read-only file system").
//
// It is the one place that maps the operating system's errors (a missing
// file or folder, permission denied, a read-only or full disk, a folder
// given as a file; on Windows also a file another program holds open)
// and the GPU's (out of memory) to such words; the window and the terminal
// both show every error through Explain. Errors the engine already words
// for users (a damaged GeoTIFF, an unknown index, a grid mismatch) pass
// through unchanged but for being kept on one line.
package usererr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"

	"canopy/native/cuda"
)

// Error is an error explained: the file concerned (empty when none is
// known) and what went wrong in a user's words. It wraps the original
// error, so errors.Is and errors.As still see the system's.
type Error struct {
	// Path is the file or folder concerned, as the user gave it.
	Path string
	// Words say what went wrong and, where there is one, what to do.
	Words string
	// Err is the original error.
	Err error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Words
	}
	return e.Path + ": " + e.Words
}

func (e *Error) Unwrap() error { return e.Err }

// Explain returns err in a user's words: an *Error for the conditions
// this package knows (see the package comment), else err itself, its
// message kept on one line. Explain(nil) is nil; an error explained once
// is returned as it is.
func Explain(err error) error {
	if err == nil {
		return nil
	}
	var done *Error
	if errors.As(err, &done) && done == err {
		return err
	}
	if _, ok := err.(clipped); ok {
		return err
	}
	if e := explainOS(err); e != nil {
		return clip(e)
	}
	if e := explainGPU(err); e != nil {
		return clip(e)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		return clip(oneLine{err})
	}
	return clip(err)
}

// MaxLine is the longest message Explain gives, in bytes: a longer one
// (built from a hostile file's member names, keys or XML names) keeps its
// start, which names the file, and its end, which says what is wrong,
// with the middle cut out.
const MaxLine = 1000

// Clip cuts s to MaxLine bytes, as Explain cuts its messages: the start
// and the end kept, "…" and the number of bytes left out between them,
// at character boundaries.
func Clip(s string) string {
	if len(s) <= MaxLine {
		return s
	}
	head, tail := MaxLine*3/4, MaxLine/5
	h := s[:head]
	for len(h) > 0 && !utf8.RuneStart(s[len(h)]) {
		h = h[:len(h)-1]
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return fmt.Sprintf("%s … (%d bytes left out) … %s", h, t-len(h), s[t:])
}

// clipped is an error whose message is cut to MaxLine (Clip).
type clipped struct{ err error }

func (c clipped) Error() string { return Clip(c.err.Error()) }
func (c clipped) Unwrap() error { return c.err }

// clip returns err, or err with its message cut when it is too long.
func clip(err error) error {
	if len(err.Error()) <= MaxLine {
		return err
	}
	return clipped{err}
}

// Line is Explain's message.
func Line(err error) string {
	if err == nil {
		return ""
	}
	return Explain(err).Error()
}

// oneLine is an error whose message is kept on one line.
type oneLine struct{ err error }

func (o oneLine) Error() string { return flatten(o.err.Error()) }
func (o oneLine) Unwrap() error { return o.err }

var spaces = regexp.MustCompile(`\s*[\r\n]+\s*`)

// flatten puts a message of several lines on one: "first; second",
// "heading: first".
func flatten(s string) string {
	s = spaces.ReplaceAllString(strings.TrimSpace(s), "; ")
	return strings.ReplaceAll(s, ":; ", ": ")
}

// writeOps are the operations of fs.PathError that write.
var writeOps = map[string]bool{"write": true, "create": true, "mkdir": true, "rename": true,
	"sync": true, "truncate": true, "chmod": true, "remove": true, "symlink": true, "link": true, "fallocate": true}

// explainOS explains an error of the file system, nil for any other.
func explainOS(err error) *Error {
	path, op := pathOf(err)
	write := writeOps[op] || writes(err)
	if words := windowsWords(err, path, write); words != "" {
		return &Error{Path: path, Words: words, Err: err}
	}
	words := ""
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		words = "the disk is full; free some space or choose another place"
	case errors.Is(err, syscall.EROFS):
		if write || path != "" {
			words = "the folder is read-only; choose another place"
		} else {
			words = "the disk is read-only; choose another place"
		}
	case errors.Is(err, fs.ErrPermission):
		words = permissionWords(path, write)
	case errors.Is(err, syscall.EISDIR):
		if write {
			words = "this is a folder; give the name of a file to write"
		} else {
			words = "this is a folder, not a file; choose a file"
		}
	case errors.Is(err, syscall.ENOTDIR):
		words = "a part of the path is a file, not a folder"
	case errors.Is(err, fs.ErrNotExist):
		words = notExistWords(path, write)
	case errors.Is(err, syscall.ENAMETOOLONG):
		words = "the name is too long; choose a shorter one"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		words = "too many files are open; close some programs and try again"
	case errors.Is(err, syscall.ETXTBSY), errors.Is(err, syscall.EBUSY):
		words = "the file is in use by another program; close it and try again"
	case errors.Is(err, syscall.EIO):
		words = "the disk reported an error reading or writing it; the disk or the file may be damaged"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		words = "the disk did not answer in time; try again"
	case errors.Is(err, syscall.ENOMEM):
		words = "there is not enough memory; close other programs or choose a smaller scene"
	default:
		return nil
	}
	return &Error{Path: path, Words: words, Err: err}
}

// permissionWords: reading a file one may not read, or writing where one
// may not.
func permissionWords(path string, write bool) string {
	exists := false
	if path != "" {
		_, serr := os.Lstat(path)
		exists = serr == nil
	}
	switch {
	case write && exists:
		return "you are not allowed to replace it (permission denied); choose another place"
	case write || (path != "" && !exists):
		return "you are not allowed to write in this folder (permission denied); choose another place"
	}
	return "you are not allowed to open it (permission denied)"
}

// notExistWords: a file that is not there, or a folder to write into
// that is not there.
func notExistWords(path string, write bool) string {
	if path != "" {
		dir := filepath.Dir(path)
		if _, err := os.Stat(dir); err != nil && dir != "." && dir != path {
			if write {
				return "the folder " + dir + " does not exist; choose another place"
			}
			return "there is no such file: the folder " + dir + " does not exist"
		}
	}
	if write {
		return "could not be created here; choose another place"
	}
	return "there is no such file or folder"
}

// tmpName is the name of a temporary file that becomes another
// (compute/outfile's ".NAME.RANDOM.tmp").
var tmpName = regexp.MustCompile(`^\.(.+)\.[0-9a-f]{8,}\.tmp$`)

// pathOf finds the file an error is about and the operation: the
// innermost fs.PathError's or os.LinkError's (a temporary file named for
// the file it becomes), else the name in a "read PATH:" or "write PATH:"
// message.
func pathOf(err error) (path, op string) {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		path, op = pe.Path, pe.Op
	case errors.As(err, &le):
		path, op = le.New, "rename"
	default:
		// The engine's readers and writers name the file in the message
		// and keep only the reason ("read B04.tif: no such file or
		// directory"): the innermost such name.
		reason := ""
		var errno syscall.Errno
		if errors.As(err, &errno) {
			reason = errno.Error()
		}
		path, op = namedIn(err.Error(), reason)
		if path == "" {
			return "", ""
		}
	}
	dir, base := filepath.Split(path)
	if m := tmpName.FindStringSubmatch(base); m != nil {
		path = dir + m[1]
		if op == "open" {
			op = "write"
		}
	}
	return path, op
}

// namedIn finds the file in an engine's message, which names it and
// keeps only the system's reason ("read B04.tif: no such file or
// directory", "S2A.zip: is a directory"): the part just before the
// reason, else the innermost "read PATH", "write PATH" (or open, create,
// "read stands PATH") among the message's ": "-separated parts; and the
// operation.
func namedIn(msg, reason string) (path, op string) {
	parts := strings.Split(msg, ": ")
	cut := func(p string) (string, string) {
		for _, o := range []string{"read stands ", "read ", "write ", "open ", "create "} {
			if rest, ok := strings.CutPrefix(p, o); ok && rest != "" {
				return rest, strings.Fields(o)[0]
			}
		}
		return p, ""
	}
	for k := len(parts) - 1; k > 0 && reason != ""; k-- {
		if strings.HasPrefix(parts[k], reason) {
			p, o := cut(parts[k-1])
			if o != "" || strings.ContainsAny(p, `./\`) {
				return p, o
			}
			break
		}
	}
	for _, p := range parts[:len(parts)-1] {
		if rest, o := cut(p); o != "" {
			path, op = rest, o
		}
	}
	return path, op
}

// writes reports whether the message says a file was being written.
func writes(err error) bool {
	m := err.Error()
	return strings.HasPrefix(m, "write ") || strings.Contains(m, ": write ") || strings.HasPrefix(m, "create ")
}

// explainGPU explains a GPU that ran out of memory, nil for any other
// error.
func explainGPU(err error) *Error {
	var ce *cuda.Error
	oom := errors.As(err, &ce) && ce.Code == cuda.ErrOutOfMemory
	oom = oom || strings.Contains(err.Error(), "GL_OUT_OF_MEMORY")
	if !oom {
		return nil
	}
	return &Error{Words: "the GPU ran out of memory for this scene; choose a CPU backend (go-parallel, c) or a smaller scene (" + flatten(err.Error()) + ")", Err: err}
}
