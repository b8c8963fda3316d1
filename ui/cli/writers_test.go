package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readOnly are the commands that write no file, and what they do
// instead.
var readOnly = map[string]string{
	"backends": "prints the backends",
	"indices":  "prints the catalogue",
	"scene":    "prints what a product holds",
	"stack":    "prints a stack's dates and their valid shares",
}

// writerRun builds a command line of a writing command whose output slot
// goes to target: the inputs are made in dir (returned, so that a run can
// be checked not to change them), the command's other outputs go to
// fresh paths in dir (returned: all or none, they must not appear when
// the target is refused).
type writerRun func(t *testing.T, dir, target string) (args, inputs, others []string)

// writers are the commands that write files, each with the runs that put
// each of its outputs on a hostile path. A new command must be added to
// writers (with its outputs) or to readOnly: TestEveryCommandWritesSafely
// fails until it is.
var writers = map[string]map[string]writerRun{
	"compute": slotsOf([]string{"--tif", "--png", "--layout"}, func(t *testing.T, dir string) ([]string, []string) {
		red, nir := fakePair(t, dir, "24x16")
		return []string{"compute", "--red", red, "--nir", nir, "--backend", "go"}, []string{red, nir}
	}, ".png"),
	"zonal": slotsOf([]string{"--csv", "--gpkg"}, func(t *testing.T, dir string) ([]string, []string) {
		red, nir, stands := zonalFixture(t, dir, 2, 8)
		return []string{"zonal", "--red", red, "--nir", nir, "--stands", stands, "--backend", "go"}, []string{red, nir, stands}
	}, ".out"),
	"change": slotsOf([]string{"--tif", "--png", "--csv"}, func(t *testing.T, dir string) ([]string, []string) {
		before, after := filepath.Join(dir, "before.tif"), filepath.Join(dir, "after.tif")
		date(t, before, 30, 20, 600000, 0, 0, 0, 0, 0)
		date(t, after, 30, 20, 600000, 2500, 10, 5, 20, 15)
		_, _, stands := zonalFixture(t, dir, 2, 8)
		return []string{"change", "--before", before, "--after", after, "--stands", stands, "--backend", "go"}, []string{before, after, stands}
	}, ".out"),
	"fake": slotsOf([]string{"--red", "--nir"}, func(t *testing.T, dir string) ([]string, []string) {
		return []string{"fake", "--size", "16x8"}, nil
	}, ".tif"),
	"bench": slotsOf([]string{"--chart"}, func(t *testing.T, dir string) ([]string, []string) {
		return []string{"bench", "--size", "16", "--backends", "go", "--repeat", "1"}, nil
	}, ".png"),
	"warp": slotsOf([]string{"--tif"}, func(t *testing.T, dir string) ([]string, []string) {
		a := filepath.Join(dir, "a.tif")
		writeTile(t, a, 32632, 713500, 5600000, 40, 1)
		return []string{"warp", a}, []string{a}
	}, ".tif"),
	"composite": slotsOf([]string{"--tif"}, func(t *testing.T, dir string) ([]string, []string) {
		paths, _ := seasonStack(t, dir, 6, 4, 8, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		return append([]string{"composite", "--period", "2019/2019", "--backend", "go"}, paths...), paths
	}, ".tif"),
	"monitor": slotsOf([]string{"--tif", "--png", "--layout", "--csv", "--gpkg"}, func(t *testing.T, dir string) ([]string, []string) {
		paths, _ := seasonStack(t, dir, 40, 30, 40, time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC))
		_, _, stands := zonalFixture(t, dir, 2, 8)
		return append([]string{"monitor", "--history", "2019/2019", "--monitor", "2020/", "--harmonics", "1", "--stands", stands, "--backend", "go"}, paths...), append(paths, stands)
	}, ".png"),
	// search --out saves what a STAC API (here a local one) listed; the
	// area is the stands' extent, so that the stands are an input.
	"search": slotsOf([]string{"--out"}, func(t *testing.T, dir string) ([]string, []string) {
		srv, _ := stacAPI(t)
		_, _, stands := zonalFixture(t, dir, 2, 8)
		return []string{"search", "--collection", "sentinel-2-l2a", "--stands", stands, "--datetime", "2024-06-01/2024-06-30", "--api", srv.URL + "/v1"}, []string{stands}
	}, ".json"),
	// batch writes DIR/NAME.tif for a scene NAME.tif (--out DIR): the
	// target is that file (the scene itself when the target is an input).
	"batch": {"--out": func(t *testing.T, dir, target string) ([]string, []string, []string) {
		scene := filepath.Join(dir, strings.TrimSuffix(filepath.Base(target), ".tif")+".tif")
		if _, err := os.Lstat(scene); err != nil {
			date(t, scene, 24, 16, 600000, 0, 0, 0, 0, 0)
		}
		return []string{"batch", "--out", filepath.Dir(target), "--progress", "off", scene}, []string{scene}, nil
	}},
}

// outputNames are flag names that name a file a command writes.
var outputNames = map[string]bool{"tif": true, "png": true, "csv": true, "gpkg": true, "layout": true, "chart": true, "out": true, "pdf": true, "svg": true, "geojson": true, "kml": true}

// writesWords are what a flag's help says when it names a file written.
var writesWords = regexp.MustCompile(`(?i)\b(write|writes|save|saves|output)\b`)

// outputFlags are the flags of `canopy name` (from its help) that name a
// file it writes: by the flag's name, or its help saying so.
func outputFlags(t *testing.T, name string) []string {
	t.Helper()
	code, out, _ := run(t, name, "--help")
	if code != ExitOK {
		t.Errorf("canopy %s --help: exit %d", name, code)
		return nil
	}
	var flags []string
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			cur = m[1]
			if outputNames[cur] {
				flags = append(flags, "--"+cur)
				cur = ""
			}
			continue
		}
		if cur != "" && strings.HasPrefix(l, "    \t") && writesWords.MatchString(l) {
			flags = append(flags, "--"+cur)
			cur = ""
		}
	}
	return flags
}

// flagLine is a flag's first line in a command's help: "  -name type".
var flagLine = regexp.MustCompile(`^  -([a-z][a-z0-9-]*)\b`)

// slotsOf makes the runs of a command whose outputs are flags: one run
// per flag, the other flags on fresh paths (with ext).
func slotsOf(flags []string, base func(t *testing.T, dir string) (args, inputs []string), ext string) map[string]writerRun {
	m := map[string]writerRun{}
	for _, fl := range flags {
		m[fl] = func(t *testing.T, dir, target string) ([]string, []string, []string) {
			args, inputs := base(t, dir)
			var others []string
			for _, o := range flags {
				p := target
				if o != fl {
					p = filepath.Join(dir, "other"+strings.TrimLeft(o, "-")+ext)
					others = append(others, p)
				}
				args = append(args, o, p)
			}
			return args, inputs, others
		}
	}
	return m
}

// TestEveryCommandWritesSafely runs every command of the command table
// (commands, which Run dispatches through) that writes files with each of
// its outputs on a hostile path: a symbolic link (to a file that must stay
// as it is), a FIFO (held open by a reader, so that writing into it would
// show rather than hang), a folder, a device (where mknod is allowed) and
// one of the run's own inputs. Each must be refused with one line on
// stderr, leave the link, FIFO, device, folder and inputs as they were,
// write none of the run's other outputs (all or none) and leave no
// temporary file. A command in the table that is in neither writers nor
// readOnly fails the test, and so does a name in those lists that is no
// longer a command.
func TestEveryCommandWritesSafely(t *testing.T) {
	if len(commands) < 5 {
		t.Fatalf("the command table lists only %d commands", len(commands))
	}
	known := map[string]bool{}
	for _, c := range commands {
		known[c.name] = true
		_, w := writers[c.name]
		_, r := readOnly[c.name]
		switch {
		case !w && !r:
			t.Errorf(`command %q is in the command table (ui/cli/cli.go) but this test does not know whether it writes files.
If it writes files: open each output with compute/outfile (outfile.NewSet(inputs...), then Set.Create per output and Set.Commit, or Set.Abort on failure;
never os.Create or os.WriteFile), so that an output is never written over a link, FIFO, device, folder or one of its own inputs, and add the command to
writers in ui/cli/writers_test.go: one writerRun per output flag (slotsOf does it for flags) that builds a small valid run with that output on the
hostile path it is given. If it writes nothing: add it to readOnly there, saying what it does instead.`, c.name)
		case w && r:
			t.Errorf("command %q is in both writers and readOnly (ui/cli/writers_test.go): keep it in one", c.name)
		}
	}
	// Each flag that names a file written (by its name, or its help saying
	// it writes, saves or outputs) has its hostile runs.
	for _, c := range commands {
		for _, fl := range outputFlags(t, c.name) {
			if _, ok := writers[c.name][fl]; ok {
				continue
			}
			if _, ok := readOnly[c.name]; ok {
				t.Errorf("canopy %s is listed in readOnly (ui/cli/writers_test.go) but its flag %s writes a file: write it through compute/outfile (outfile.NewSet with the run's inputs) and move the command to writers, with a run of %s", c.name, fl, fl)
				continue
			}
			t.Errorf("canopy %s %s writes a file (by its name or its help) but writers in ui/cli/writers_test.go has no run of it: write it through compute/outfile with the command's other outputs, and add %q to the command's slots", c.name, fl, fl)
		}
	}
	for _, m := range []map[string]string{readOnly} {
		for name := range m {
			if !known[name] {
				t.Errorf("readOnly lists %q, which is not in the command table (ui/cli/cli.go): remove it", name)
			}
		}
	}
	for name := range writers {
		if !known[name] {
			t.Errorf("writers lists %q, which is not in the command table (ui/cli/cli.go): remove it", name)
		}
	}
	if testing.Short() {
		t.Skip("the hostile runs of every writing command (-short)")
	}
	for _, c := range slices.Sorted(func(yield func(string) bool) {
		for k := range writers {
			if !yield(k) {
				return
			}
		}
	}) {
		for slot, build := range writers[c] {
			for _, kind := range []string{"symlink", "fifo", "folder", "device", "input"} {
				t.Run(c+" "+slot+" "+kind, func(t *testing.T) {
					hostileRun(t, c, build, kind)
				})
			}
		}
	}
}

func hostileRun(t *testing.T, cmd string, build writerRun, kind string) {
	dir := t.TempDir()
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	victim := filepath.Join(dir, "precious.txt")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	target := filepath.Join(outDir, "target.tif")
	var args, inputs, others []string
	switch kind {
	case "symlink":
		os.Symlink(victim, target)
	case "fifo":
		if err := syscall.Mkfifo(target, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		r, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if n, _ := r.Read(make([]byte, 16)); n > 0 {
				t.Errorf("%d bytes were written into the FIFO", n)
			}
			r.Close()
		}()
	case "folder":
		os.Mkdir(target, 0o755)
	case "device":
		if err := syscall.Mknod(target, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("mknod (root only): %v", err)
		}
	case "input":
		// The run's first input as the output.
		_, in, _ := build(t, dir, target)
		if len(in) == 0 {
			t.Skip("the command reads no file")
		}
		target = in[0]
		if cmd == "batch" {
			outDir = dir
		}
	}
	args, inputs, others = build(t, dir, target)
	sums := map[string]string{victim: digest(t, victim)}
	for _, p := range inputs {
		sums[p] = digest(t, p)
	}
	st0, _ := os.Lstat(target)
	code, _, e := run(t, args...)
	if code == ExitOK {
		t.Fatalf("%s: exit 0: the output was written over a %s", strings.Join(args, " "), kind)
	}
	if s := strings.TrimRight(e, "\n"); s == "" || strings.Contains(s, "\n") {
		t.Errorf("stderr is not one line: %q", e)
	}
	for p, d := range sums {
		if digest(t, p) != d {
			t.Errorf("%s was changed", p)
		}
	}
	if st, err := os.Lstat(target); err != nil || st0 == nil || st.Mode().Type() != st0.Mode().Type() || !os.SameFile(st, st0) {
		t.Errorf("the %s at the output path was replaced or removed (%v)", kind, err)
	}
	for _, o := range others {
		if _, err := os.Lstat(o); err == nil {
			t.Errorf("%s was written although %s was refused: not all or none", o, target)
		}
	}
	for _, d := range []string{dir, outDir} {
		if l := leftTemps(d); len(l) > 0 {
			t.Errorf("left %v", l)
		}
	}
}

// directWrites are the calls that create, replace or write a file by
// name; user outputs go through compute/outfile instead.
var directWrites = map[string]bool{
	"os.Create": true, "os.WriteFile": true, "os.OpenFile": true, "os.CreateTemp": true, "os.Rename": true,
	"os.Truncate": true, "ioutil.WriteFile": true, "ioutil.TempFile": true, "syscall.Open": true, "syscall.Creat": true,
}

// notOutputs are the files allowed to write directly, and why what they
// write is not a user's output.
var notOutputs = map[string]string{
	"compute/internal/infile/open_unix.go": "opens inputs read-only",
}

// TestNoDirectFileWrites: the code of the commands and the window (main,
// ui/...) and the packages that encode their outputs writes files only
// through compute/outfile (a Set, WriteFile, OpenJournal, Scratch): no
// os.Create, os.WriteFile, os.OpenFile, os.Rename... outside the files
// in notOutputs.
func TestNoDirectFileWrites(t *testing.T) {
	root := "../.."
	var roots []string
	for _, d := range []string{".", "ui", "compute/geotiff", "compute/raster", "compute/vector", "compute/zonal", "compute/change", "compute/stats", "compute/internal/infile"} {
		roots = append(roots, filepath.Join(root, d))
	}
	fset := token.NewFileSet()
	for _, r := range roots {
		filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != r && (d.Name() == "testdata" || (r == filepath.Join(root, ".") && p != r)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				name := pkg.Name + "." + sel.Sel.Name
				if directWrites[name] && notOutputs[rel] == "" {
					t.Errorf("%s:%d: %s writes a file outside compute/outfile: write outputs through an outfile.Set (or outfile.WriteFile), or add the file to notOutputs with why it writes no user output",
						rel, fset.Position(call.Pos()).Line, name)
				}
				return true
			})
			return nil
		})
	}
}
