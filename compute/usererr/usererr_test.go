package usererr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"canopy/native/cuda"
)

// TestExplain: each condition a user can meet, as the system and the
// engine report it, becomes one line that names the file and says what
// happened (and what to do).
func TestExplain(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.tif")
	os.WriteFile(existing, []byte("x"), 0o644)
	missingDir := filepath.Join(dir, "nodir", "out.tif")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"read-only folder, outfile's create",
			fmt.Errorf("write out.tif: %w", syscall.EROFS),
			"out.tif: the folder is read-only; choose another place"},
		{"read-only folder, temporary file",
			&fs.PathError{Op: "open", Path: "maps/.out.tif.1a2b3c4d5e6f.tmp", Err: syscall.EROFS},
			"maps/out.tif: the folder is read-only; choose another place"},
		{"full disk while writing the temporary file",
			fmt.Errorf("encode: %w", &fs.PathError{Op: "write", Path: ".ndvi.tif.00aa11bb22cc.tmp", Err: syscall.ENOSPC}),
			"ndvi.tif: the disk is full; free some space or choose another place"},
		{"quota",
			fmt.Errorf("write out.csv: %w", syscall.EDQUOT),
			"out.csv: the disk is full; free some space or choose another place"},
		{"permission denied writing a new file",
			fmt.Errorf("write %s: %w", filepath.Join(dir, "new.tif"), syscall.EACCES),
			filepath.Join(dir, "new.tif") + ": you are not allowed to write in this folder (permission denied); choose another place"},
		{"permission denied replacing a file",
			&fs.PathError{Op: "write", Path: existing, Err: syscall.EPERM},
			existing + ": you are not allowed to replace it (permission denied); choose another place"},
		{"permission denied reading",
			fmt.Errorf("red band: read %s: %w", existing, syscall.EACCES),
			existing + ": you are not allowed to open it (permission denied)"},
		{"missing file",
			fmt.Errorf("read %s: %w", filepath.Join(dir, "B04.tif"), syscall.ENOENT),
			filepath.Join(dir, "B04.tif") + ": there is no such file or folder"},
		{"missing file, os.ReadFile",
			func() error { _, err := os.ReadFile(filepath.Join(dir, "gone.json")); return err }(),
			filepath.Join(dir, "gone.json") + ": there is no such file or folder"},
		{"missing folder for an output",
			fmt.Errorf("write %s: %w", missingDir, syscall.ENOENT),
			missingDir + ": the folder " + filepath.Dir(missingDir) + " does not exist; choose another place"},
		{"missing folder for an input",
			fmt.Errorf("read stands %s: %w", missingDir, fs.ErrNotExist),
			missingDir + ": there is no such file: the folder " + filepath.Dir(missingDir) + " does not exist"},
		{"a folder given as the file to read",
			func() error { _, err := os.ReadFile(dir); return err }(),
			dir + ": this is a folder, not a file; choose a file"},
		{"a folder given as the output",
			fmt.Errorf("write maps: %w", syscall.EISDIR),
			"maps: this is a folder; give the name of a file to write"},
		{"a file used as a folder",
			&fs.PathError{Op: "open", Path: existing + "/x.tif", Err: syscall.ENOTDIR},
			existing + "/x.tif: a part of the path is a file, not a folder"},
		{"a path with spaces and a context before it",
			fmt.Errorf("zonal: read stands my stands.gpkg: %w", syscall.ENOENT),
			"my stands.gpkg: there is no such file or folder"},
		{"a product's own message",
			fmt.Errorf("S2B_MSIL2A.zip: %w", syscall.ENOENT),
			"S2B_MSIL2A.zip: there is no such file or folder"},
		{"a folder in a product's message",
			fmt.Errorf("scene: LC09_L2SP.tar: %w", syscall.EISDIR),
			"LC09_L2SP.tar: this is a folder, not a file; choose a file"},
		{"no file named",
			fmt.Errorf("band: %w", syscall.ENOSPC),
			"the disk is full; free some space or choose another place"},
		{"a busy file",
			&os.LinkError{Op: "rename", Old: ".a.tif.0123456789ab.tmp", New: "a.tif", Err: syscall.ETXTBSY},
			"a.tif: the file is in use by another program; close it and try again"},
		{"disk error",
			fmt.Errorf("read scene.tif: %w", syscall.EIO),
			"scene.tif: the disk reported an error reading or writing it; the disk or the file may be damaged"},
		{"CUDA out of memory",
			fmt.Errorf("device memory for 3 index planes of 10980x10980: %w", &cuda.Error{Func: "cuMemAlloc_v2", Code: cuda.ErrOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Text: "out of memory"}),
			"the GPU ran out of memory for this scene; choose a CPU backend (go-parallel, c) or a smaller scene (device memory for 3 index planes of 10980x10980: cuMemAlloc_v2: out of memory (CUDA_ERROR_OUT_OF_MEMORY))"},
		{"GL out of memory",
			errors.New("gl: glBufferData: out of GPU memory (GL_OUT_OF_MEMORY)"),
			"the GPU ran out of memory for this scene; choose a CPU backend (go-parallel, c) or a smaller scene (gl: glBufferData: out of GPU memory (GL_OUT_OF_MEMORY))"},
		{"an engine message in a user's words passes",
			errors.New("read trunc.tif: the file ends early; it may be incomplete (tile 0)"),
			"read trunc.tif: the file ends early; it may be incomplete (tile 0)"},
		{"a message of several lines is one line",
			errors.New("the formula does not parse:\n  (nir - red\n  ^"),
			"the formula does not parse: (nir - red; ^"},
	}
	for _, c := range cases {
		got := Explain(c.err)
		if got.Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got.Error(), c.want)
		}
		if Line(c.err) != c.want {
			t.Errorf("%s: Line %q", c.name, Line(c.err))
		}
		if strings.ContainsAny(got.Error(), "\r\n") {
			t.Errorf("%s: not one line: %q", c.name, got)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the explained error does not wrap the original", c.name)
		}
		if again := Explain(got); again.Error() != got.Error() {
			t.Errorf("%s: explained twice: %q", c.name, again)
		}
	}
	if Explain(nil) != nil || Line(nil) != "" {
		t.Error("Explain(nil) is not nil")
	}
}

// TestExplainRealFiles: the errors the operating system really gives for
// a missing file, a folder read as a file, a file under a file and a
// folder one may not write in (the last skipped as root, who may).
func TestExplainRealFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := os.Open(filepath.Join(dir, "B08.tif"))
	if got := Line(err); got != filepath.Join(dir, "B08.tif")+": there is no such file or folder" {
		t.Errorf("missing: %q", got)
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, nil, 0o644)
	_, err = os.Create(filepath.Join(f, "out.tif"))
	if got := Line(err); !strings.HasSuffix(got, "out.tif: a part of the path is a file, not a folder") {
		t.Errorf("under a file: %q", got)
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	_, err = os.Create(filepath.Join(ro, "out.tif"))
	if os.Geteuid() == 0 || err == nil {
		t.Skip("root may write in a read-only folder")
	}
	if got := Line(err); got != filepath.Join(ro, "out.tif")+": you are not allowed to write in this folder (permission denied); choose another place" {
		t.Errorf("read-only folder: %q", got)
	}
}

// TestLongLinesClipped: a message of a megabyte (a hostile archive's
// member name, a STAC key) is cut to MaxLine, keeping its start (the
// file) and its end (what is wrong), at character boundaries.
func TestLongLinesClipped(t *testing.T) {
	name := strings.Repeat("é", 500000) // 1 MB of two-byte characters
	err := fmt.Errorf("S2A.zip: member %q points outside the archive: refused", name)
	got := Explain(err)
	m := got.Error()
	if len(m) > MaxLine+40 || !strings.HasPrefix(m, "S2A.zip: member \"é") || !strings.HasSuffix(m, "points outside the archive: refused") ||
		!utf8.ValidString(m) || !strings.Contains(m, "bytes left out") {
		t.Errorf("%d bytes: %.200q … %.100q", len(m), m, m[max(0, len(m)-100):])
	}
	if !errors.Is(got, err) || Explain(got) != got {
		t.Error("the clipped error does not wrap the original, or is clipped twice")
	}
	if s := "short: line"; Clip(s) != s {
		t.Errorf("Clip(%q) = %q", s, Clip(s))
	}
	long := &Error{Path: strings.Repeat("d/", 3000) + "x.tif", Words: "there is no such file or folder", Err: fs.ErrNotExist}
	if m := Explain(fmt.Errorf("read: %w", long)).Error(); len(m) > MaxLine+40 || !strings.HasSuffix(m, "there is no such file or folder") {
		t.Errorf("a long path: %d bytes %.100q", len(m), m)
	}
}
