package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Output safety (issue 26): outputs never destroy inputs, a run's outputs
// are all or none, nothing is written through a link or into a FIFO or a
// device, nothing is left behind on failure, a full disk or SIGINT.

// productFixtures makes the synthetic products of scripts/fixtures-products
// (real layouts: a Sentinel-2 L2A SAFE, a Landsat C2 L2 folder, a STAC
// item with GeoTIFF assets) in dir, skipping the test when GDAL is missing
// (failing it when CANOPY_EXPECT_GDAL=1).
func productFixtures(t *testing.T, dir string) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		why = "GDAL (gdal-bin, python3-gdal) is not installed: the fixture products cannot be made"
	} else if out, err := exec.Command("../../scripts/fixtures-products", dir).CombinedOutput(); err != nil {
		why = fmt.Sprintf("scripts/fixtures-products failed: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if why != "" {
		if os.Getenv("CANOPY_EXPECT_GDAL") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
}

func digest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	h := sha256.Sum256(b)
	return fmt.Sprintf("%x", h[:8])
}

// oneLine checks that a refusal is one line on stderr that contains want.
func oneLineErr(t *testing.T, what, stderr, want string) {
	t.Helper()
	if s := strings.TrimRight(stderr, "\n"); s == "" || strings.Contains(s, "\n") || !strings.Contains(s, want) {
		t.Errorf("%s: stderr %q, want one line containing %q", what, stderr, want)
	}
}

// leftTemps lists the temporary files outfile names ".NAME.*.tmp" in dir.
func leftTemps(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	j, _ := filepath.Glob(filepath.Join(dir, "*-journal"))
	return append(m, j...)
}

// TestSceneFilesAreInputs: a file of the product given as --scene (a band,
// the metadata, a mask) named as an output is refused with one line, and
// the file is left as it was: the whole product is the run's input, not
// only its path.
func TestSceneFilesAreInputs(t *testing.T) {
	fx := t.TempDir()
	productFixtures(t, fx)
	const s2 = "S2A_MSIL2A_20230615T102021_N0500_R065_T32TQM_20230615T163207.SAFE"
	const ls = "LC08_L2SP_044034_20200827_20200906_02_T1"
	glob1 := func(pattern string) string {
		m, _ := filepath.Glob(filepath.Join(fx, pattern))
		if len(m) != 1 {
			t.Fatalf("fixture %s: %v", pattern, m)
		}
		return m[0]
	}
	stands := filepath.Join(t.TempDir(), "stands.geojson")
	os.WriteFile(stands, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[11,46],[11.01,46],[11.01,46.01],[11,46]]]}}]}`), 0o644)
	for _, c := range []struct {
		scene   string
		targets []string
	}{
		{s2, []string{s2 + "/GRANULE/*/IMG_DATA/R10m/*_B04_10m.jp2", s2 + "/GRANULE/*/IMG_DATA/R20m/*_SCL_20m.jp2", s2 + "/MTD_MSIL2A.xml"}},
		{ls, []string{ls + "/*_SR_B4.TIF", ls + "/*_QA_PIXEL.TIF", ls + "/*_MTL.txt"}},
		{"stac/item.json", []string{"stac/B04.tif", "stac/B08.tif", "stac/SCL.tif"}},
	} {
		scene := filepath.Join(fx, c.scene)
		for _, pat := range c.targets {
			target := glob1(pat)
			before := digest(t, target)
			name := c.scene + " " + filepath.Base(target)
			for _, args := range [][]string{
				{"compute", "--scene", scene, "--backend", "go", "--tif", target},
				{"compute", "--scene", scene, "--backend", "go", "--png", target},
				{"zonal", "--scene", scene, "--backend", "go", "--stands", stands, "--csv", target},
				{"zonal", "--scene", scene, "--backend", "go", "--stands", stands, "--gpkg", target},
			} {
				code, _, e := run(t, args...)
				if code != ExitUsage {
					t.Errorf("%s %s: exit %d, want %d (%s)", name, args[0], code, ExitUsage, e)
				}
				oneLineErr(t, name+" "+strings.Join(args[:1], " "), e, "refusing to overwrite input")
			}
			code, _, e := run(t, "change", "--before", scene, "--after", scene, "--backend", "go", "--tif", target)
			if code != ExitFail {
				t.Errorf("%s change: exit %d, want %d (%s)", name, code, ExitFail, e)
			}
			oneLineErr(t, name+" change", e, "an input of this run")
			if after := digest(t, target); after != before {
				t.Fatalf("%s: the product's file was changed", name)
			}
			if l := leftTemps(filepath.Dir(target)); len(l) > 0 {
				t.Errorf("%s: left %v", name, l)
			}
		}
	}
}

// zonalFixture writes a fake pair (40×30 pixels of 10 m, EPSG:32632) and n
// stands over it, each a circle of k vertices, as GeoJSON.
func zonalFixture(t *testing.T, dir string, n, k int) (red, nir, stands string) {
	t.Helper()
	red, nir = fakePair(t, dir, "40x30")
	var feats []string
	for i := range n {
		cx, cy := 600000+10*(5+float64(i%30)), 5300000-10*(5+float64(i%20))
		var pts []string
		for j := 0; j <= k; j++ {
			a := 2 * math.Pi * float64(j%k) / float64(k)
			pts = append(pts, fmt.Sprintf("[%.6f,%.6f]", cx+40*math.Cos(a), cy+40*math.Sin(a)))
		}
		feats = append(feats, fmt.Sprintf(`{"type":"Feature","properties":{"name":"s%d"},"geometry":{"type":"Polygon","coordinates":[[%s]]}}`, i, strings.Join(pts, ",")))
	}
	gj := `{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::32632"}},"features":[` + strings.Join(feats, ",") + `]}`
	stands = filepath.Join(dir, "stands.geojson")
	if err := os.WriteFile(stands, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	return red, nir, stands
}

// TestZonalOutputsAllOrNone: zonal's CSV and GeoPackage are one run's
// outputs: a GeoPackage path that is a FIFO, a device, a symbolic link or
// a folder is refused with one line, and then the CSV is not written
// either (an existing one is left as it was); nothing is left behind.
func TestZonalOutputsAllOrNone(t *testing.T) {
	dir := t.TempDir()
	red, nir, stands := zonalFixture(t, dir, 3, 16)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	csvPath := filepath.Join(out, "stats.csv")
	os.WriteFile(csvPath, []byte("an older table\n"), 0o644)
	victim := filepath.Join(dir, "precious.txt")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)

	fifo := filepath.Join(out, "fifo.gpkg")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A reader holds the FIFO open, so that writing into it would not
	// block: a write-through shows as bytes read, not as a hang.
	rf, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	link := filepath.Join(out, "link.gpkg")
	os.Symlink(victim, link)
	folder := filepath.Join(out, "folder.gpkg")
	os.Mkdir(folder, 0o755)
	cases := map[string]string{"FIFO": fifo, "symbolic link": link, "folder": folder, "the stands": stands, "an input band": red}
	if dev := filepath.Join(out, "null.gpkg"); syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		cases["device"] = dev // /dev/null's numbers (root only)
	}
	for what, gp := range cases {
		code, _, e := run(t, "zonal", "--red", red, "--nir", nir, "--stands", stands, "--csv", csvPath, "--gpkg", gp)
		if code == ExitOK {
			t.Errorf("%s as --gpkg: written", what)
		}
		oneLineErr(t, what, e, gp)
		if b, _ := os.ReadFile(csvPath); string(b) != "an older table\n" {
			t.Errorf("%s as --gpkg: the CSV was written (%d bytes): not all or none", what, len(b))
		}
		if l := leftTemps(out); len(l) > 0 {
			t.Errorf("%s: left %v", what, l)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("written through the link: %q", b)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	if n, _ := rf.Read(make([]byte, 16)); n > 0 {
		t.Errorf("%d bytes were written into the FIFO", n)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	// And a good run writes both.
	gp := filepath.Join(out, "stands.gpkg")
	if code, _, e := run(t, "zonal", "--red", red, "--nir", nir, "--stands", stands, "--csv", csvPath, "--gpkg", gp); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(csvPath); !bytes.HasPrefix(b, []byte("id,")) {
		t.Errorf("CSV not written: %q", b)
	}
	if st, err := os.Stat(gp); err != nil || st.Size() == 0 {
		t.Errorf("GeoPackage not written: %v", err)
	}
}

// TestBatchJournalRules: DIR/batch.jsonl follows the outputs' rules: a
// symbolic link there is refused (its target untouched), so is a FIFO
// (at once, not waited on).
func TestBatchJournalRules(t *testing.T) {
	dir := t.TempDir()
	red, _ := fakePair(t, dir, "16x16")
	victim := filepath.Join(dir, "precious.txt")
	os.WriteFile(victim, []byte("keep me\n"), 0o644)
	for what, make := range map[string]func(string) error{
		"symbolic link": func(p string) error { return os.Symlink(victim, p) },
		"FIFO":          func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"folder":        func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		out := filepath.Join(t.TempDir(), "out")
		os.Mkdir(out, 0o755)
		journal := filepath.Join(out, "batch.jsonl")
		if err := make(journal); err != nil {
			t.Fatal(err)
		}
		code, _, e := run(t, "batch", "--out", out, "--bands", "red=1,nir=1", "--progress", "off", red)
		if code != ExitFail {
			t.Errorf("batch.jsonl a %s: exit %d (%s)", what, code, e)
		}
		oneLineErr(t, what, e, journal)
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 {
			t.Errorf("batch.jsonl a %s: %d entries in the folder, want it alone", what, len(ents))
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("written through the link: %q", b)
	}
}

// TestCLIChild runs one command line in a process of its own, as the
// canopy binary does (main calls Run), for the tests below that signal it
// or limit its file size. CANOPY_CLI_ARGS holds the arguments (JSON);
// CANOPY_CLI_PAUSE=AT holds the run the first time it reaches AT (see
// pause: "commit", "block", "block NAME"), printing PAUSED, until its
// context is cancelled; with CANOPY_CLI_STUCK=1 it then prints STUCK and
// never goes on (a run that does not stop, for the second signal);
// CANOPY_CLI_FSIZE limits the size of any file written (RLIMIT_FSIZE: a
// write beyond it fails as on a full disk).
func TestCLIChild(t *testing.T) {
	raw := os.Getenv("CANOPY_CLI_ARGS")
	if raw == "" {
		t.Skip("run by the output-safety tests in a process of their own")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	if at := os.Getenv("CANOPY_CLI_PAUSE"); at != "" {
		var once sync.Once
		pause = func(ctx context.Context, where string) {
			if where != at {
				return
			}
			first := false
			once.Do(func() { first = true })
			if !first {
				return
			}
			fmt.Println("PAUSED")
			<-ctx.Done()
			if os.Getenv("CANOPY_CLI_STUCK") == "1" {
				fmt.Println("STUCK")
				select {}
			}
		}
	}
	if v := os.Getenv("CANOPY_CLI_FSIZE"); v != "" {
		n, _ := strconv.ParseUint(v, 10, 64)
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			t.Fatal(err)
		}
	}
	os.Exit(Run(args, os.Stdout, os.Stderr))
}

func childCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	raw, _ := json.Marshal(args)
	// Bounded by the test's own deadline: a hang fails the test, not the
	// whole package's run.
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCLIChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "CANOPY_CLI_ARGS="+string(raw)), env...)
	return cmd
}

// interrupted is a child run held at a pause point (PAUSED read).
type interrupted struct {
	cmd    *exec.Cmd
	out    *bufio.Scanner
	stderr bytes.Buffer
}

// startPaused starts the child and waits until it reports PAUSED.
func startPaused(t *testing.T, cmd *exec.Cmd) *interrupted {
	t.Helper()
	r := &interrupted{cmd: cmd}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = &r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.out = bufio.NewScanner(stdout)
	if !r.next("PAUSED") {
		cmd.Wait()
		t.Fatalf("the child never paused: %s", r.stderr.String())
	}
	return r
}

// next reads the child's stdout up to the line want (false at its end).
func (r *interrupted) next(want string) bool {
	for r.out.Scan() {
		if r.out.Text() == want {
			return true
		}
	}
	return false
}

// signal sends sig and waits for the child to exit; its exit status.
func (r *interrupted) signal(sig syscall.Signal) int {
	r.cmd.Process.Signal(sig)
	for r.out.Scan() {
	}
	r.cmd.Wait()
	return r.cmd.ProcessState.ExitCode()
}

// checkInterrupted checks that an interrupted child said one line,
// "canopy CMD: interrupted", and exited 128 + the signal.
func checkInterrupted(t *testing.T, cmdName string, sig syscall.Signal, code int, stderr string) {
	t.Helper()
	if want := 128 + int(sig); code != want {
		t.Errorf("%v: exit %d, want %d (%s)", sig, code, want, stderr)
	}
	if want := "canopy " + cmdName + ": interrupted\n"; stderr != want {
		t.Errorf("%v: stderr %q, want %q", sig, stderr, want)
	}
}

// TestZonalInterruptLeavesNothing: SIGINT while zonal holds its CSV and
// GeoPackage as temporary files (held just before the commit) stops the
// run: both are removed, existing outputs are left as they were, and the
// run says "interrupted" and exits 130 (143 for SIGTERM).
func TestZonalInterruptLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	dir := t.TempDir()
	red, nir, stands := zonalFixture(t, dir, 5, 16)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	csvPath, gp := filepath.Join(out, "stats.csv"), filepath.Join(out, "stands.gpkg")
	os.WriteFile(gp, []byte("an older GeoPackage\n"), 0o644)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		r := startPaused(t, childCmd(t, []string{"CANOPY_CLI_PAUSE=commit"}, "zonal", "--red", red, "--nir", nir, "--stands", stands, "--csv", csvPath, "--gpkg", gp, "--backend", "go"))
		if l := leftTemps(out); len(l) != 2 {
			t.Errorf("before the signal: temporary files %v, want the CSV's and the GeoPackage's", l)
		}
		checkInterrupted(t, "zonal", sig, r.signal(sig), r.stderr.String())
		if l := leftTemps(out); len(l) > 0 {
			t.Errorf("%v left %v", sig, l)
		}
		if _, err := os.Stat(csvPath); err == nil {
			t.Errorf("%v: the CSV was written", sig)
		}
		if b, _ := os.ReadFile(gp); string(b) != "an older GeoPackage\n" {
			t.Errorf("%v: the existing GeoPackage was changed", sig)
		}
	}
}

// TestComputeInterrupted: Ctrl+C while compute --tif --png streams its
// blocks (held after the first block went into the COG) stops the run at
// the next block: no temporary file is left, the files that were there
// are as they were, one line says "interrupted", the exit status is 130.
// A run that does not stop (held past its context) is ended by a second
// Ctrl+C at once, its temporary files removed all the same.
func TestComputeInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	dir := t.TempDir()
	red, nir := fakePair(t, dir, "700x600")
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	tif, png := filepath.Join(out, "ndvi.tif"), filepath.Join(out, "ndvi.png")
	os.WriteFile(tif, []byte("an older map\n"), 0o644)
	args := []string{"compute", "--red", red, "--nir", nir, "--backend", "go", "--tif", tif, "--png", png}
	check := func(t *testing.T) {
		t.Helper()
		if l := leftTemps(out); len(l) > 0 {
			t.Errorf("left %v", l)
		}
		if b, _ := os.ReadFile(tif); string(b) != "an older map\n" {
			t.Errorf("the existing GeoTIFF was changed (%d bytes)", len(b))
		}
		if _, err := os.Stat(png); err == nil {
			t.Errorf("the PNG was written")
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startPaused(t, childCmd(t, []string{"CANOPY_CLI_PAUSE=block"}, args...))
			if l := leftTemps(out); len(l) < 2 {
				t.Errorf("while it runs: temporary files %v, want the GeoTIFF's and the PNG's", l)
			}
			checkInterrupted(t, "compute", sig, r.signal(sig), r.stderr.String())
			check(t)
		})
	}
	t.Run("twice", func(t *testing.T) {
		r := startPaused(t, childCmd(t, []string{"CANOPY_CLI_PAUSE=block", "CANOPY_CLI_STUCK=1"}, args...))
		r.cmd.Process.Signal(syscall.SIGINT)
		if !r.next("STUCK") {
			t.Fatalf("the first Ctrl+C did not reach the run: %s", r.stderr.String())
		}
		if code := r.signal(syscall.SIGINT); code != 130 {
			t.Errorf("the second Ctrl+C: exit %d, want 130 (%s)", code, r.stderr.String())
		}
		check(t)
	})
	// Uninterrupted, the same command writes both.
	if code, _, e := run(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(tif); !bytes.HasPrefix(b, []byte("II*\x00")) && !bytes.HasPrefix(b, []byte("II+\x00")) {
		t.Errorf("the GeoTIFF after a whole run starts %q", b[:min(len(b), 4)])
	}
}

// TestBatchInterrupted: Ctrl+C while batch computes its second scene
// (one at a time; held after the scene's first block) stops the batch:
// the first scene is done and in the journal, the second leaves no
// temporary file and no line (it was interrupted, not failed), the third
// never starts; one line says "interrupted", the exit status is 130. A
// re-run skips the first and computes the rest, into the same bytes as
// a batch never interrupted.
func TestBatchInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	in := t.TempDir()
	var scenes []string
	for i, x0 := range []float64{600000, 610000, 620000} {
		p := filepath.Join(in, "flight"+string(rune('a'+i))+".tif")
		date(t, p, 300, 260, x0, uint16(100*i), 2, 2, 8, 8)
		scenes = append(scenes, p)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"batch", "--out", out, "--index", "ndvi", "--jobs", "1", "--progress", "off", "--backend", "go", in}
	r := startPaused(t, childCmd(t, []string{"CANOPY_CLI_PAUSE=block flightb.tif"}, args...))
	if l := leftTemps(out); len(l) != 1 {
		t.Errorf("while the second scene runs: temporary files %v, want its GeoTIFF's", l)
	}
	checkInterrupted(t, "batch", syscall.SIGINT, r.signal(syscall.SIGINT), r.stderr.String())
	if l := leftTemps(out); len(l) > 0 {
		t.Errorf("left %v", l)
	}
	ls := readBatchLog(t, out)
	if len(ls) != 1 || ls[0].Scene != scenes[0] || ls[0].Status != "done" {
		t.Errorf("journal after the interrupt: %+v, want the first scene done alone", ls)
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "batch.jsonl flighta.tif" {
		t.Errorf("the folder after the interrupt holds %v", names)
	}
	if code, _, e := run(t, args...); code != 0 {
		t.Fatalf("re-run: exit %d: %s", code, e)
	}
	status := map[string]string{}
	for _, l := range readBatchLog(t, out)[1:] {
		status[l.Scene] = l.Status
	}
	if status[scenes[0]] != "skipped" || status[scenes[1]] != "done" || status[scenes[2]] != "done" {
		t.Errorf("re-run: %v", status)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, e := run(t, append([]string{"batch", "--out", whole}, args[3:]...)...); code != 0 {
		t.Fatalf("uninterrupted: exit %d: %s", code, e)
	}
	for _, s := range scenes {
		if a, b := digest(t, outputName(out, s)), digest(t, outputName(whole, s)); a != b {
			t.Errorf("%s: resumed %s, uninterrupted %s", filepath.Base(s), a, b)
		}
	}
}

// TestZonalFullDisk: a write that fails part-way (a full disk: a tiny
// tmpfs where one can be mounted, else a file-size limit, which the
// kernel enforces the same way on every write) leaves no partial file,
// no temporary file, and not the CSV either (all or none).
func TestZonalFullDisk(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tmpfs and RLIMIT_FSIZE are Linux's")
	}
	dir := t.TempDir()
	// 60 stands of 400 vertices: the CSV is a few kB, the GeoPackage
	// about 400 kB.
	red, nir, stands := zonalFixture(t, dir, 60, 400)
	check := func(t *testing.T, out string, code int, stderr string) {
		t.Helper()
		if code != ExitFail {
			t.Errorf("exit %d, want %d: %s", code, ExitFail, stderr)
		}
		oneLineErr(t, "full disk", stderr, "stands.gpkg")
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			t.Errorf("left %s", e.Name())
		}
	}
	t.Run("fsize", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		os.Mkdir(out, 0o755)
		cmd := childCmd(t, []string{"CANOPY_CLI_FSIZE=131072"}, "zonal", "--red", red, "--nir", nir, "--stands", stands,
			"--csv", filepath.Join(out, "stats.csv"), "--gpkg", filepath.Join(out, "stands.gpkg"), "--backend", "go")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		check(t, out, cmd.ProcessState.ExitCode(), stderr.String())
	})
	t.Run("tmpfs", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		os.Mkdir(out, 0o755)
		if err := syscall.Mount("tmpfs", out, "tmpfs", 0, "size=128k"); err != nil {
			t.Skipf("cannot mount a tmpfs here (%v); the fsize case stands for it", err)
		}
		defer syscall.Unmount(out, 0)
		code, _, e := run(t, "zonal", "--red", red, "--nir", nir, "--stands", stands,
			"--csv", filepath.Join(out, "stats.csv"), "--gpkg", filepath.Join(out, "stands.gpkg"), "--backend", "go")
		check(t, out, code, e)
	})
}
