package cli

import (
	"bufio"
	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/request"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"canopy/compute/outfile"
	"canopy/compute/scene"
	"canopy/compute/source"
	"canopy/compute/usererr"
)

// batchLine is one line of DIR/batch.jsonl: what happened to one scene.
type batchLine struct {
	Scene   string   `json:"scene"`
	Status  string   `json:"status"` // done, skipped or failed
	Seconds float64  `json:"seconds"`
	Outputs []string `json:"outputs,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Values says what the bands were: "reflectance" or "digital
	// numbers" (source.Radiometry, the word canopy scene uses).
	Values string `json:"values,omitempty"`
	// Fingerprint identifies the inputs and the settings the outputs were
	// made from; a re-run skips a scene whose output exists with it.
	Fingerprint string `json:"fingerprint,omitempty"`
	Shard       string `json:"shard,omitempty"`
	// Bands are a composite or monitor part's band names (batchSeason
	// merges the parts with them).
	Bands []string `json:"bands,omitempty"`
	Time  string   `json:"time"`
}

// parseShard reads --shard I/N or env (Slurm array variables, or a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with the shard count in
// CANOPY_SHARDS). "" is one shard holding everything.
func parseShard(s string, getenv func(string) string) (i, n int, err error) {
	switch s {
	case "":
		return 0, 1, nil
	case "env":
		if id := getenv("SLURM_ARRAY_TASK_ID"); id != "" {
			task, e1 := strconv.Atoi(id)
			count, e2 := strconv.Atoi(getenv("SLURM_ARRAY_TASK_COUNT"))
			lo := 0
			if m := getenv("SLURM_ARRAY_TASK_MIN"); m != "" {
				lo, _ = strconv.Atoi(m)
			}
			if e1 != nil || e2 != nil || count < 1 || task-lo < 0 || task-lo >= count {
				return 0, 0, request.Errorf("--shard env: SLURM_ARRAY_TASK_ID %q, SLURM_ARRAY_TASK_MIN %q and SLURM_ARRAY_TASK_COUNT %q do not make a shard (submit with sbatch --array=0-N)", id, getenv("SLURM_ARRAY_TASK_MIN"), getenv("SLURM_ARRAY_TASK_COUNT"))
			}
			return task - lo, count, nil
		}
		if id := getenv("JOB_COMPLETION_INDEX"); id != "" {
			task, e1 := strconv.Atoi(id)
			count, e2 := strconv.Atoi(getenv("CANOPY_SHARDS"))
			if e1 != nil || e2 != nil || count < 1 || task < 0 || task >= count {
				return 0, 0, request.Errorf("--shard env: JOB_COMPLETION_INDEX %q with CANOPY_SHARDS %q does not make a shard (set CANOPY_SHARDS to the Job's completions)", id, getenv("CANOPY_SHARDS"))
			}
			return task, count, nil
		}
		return 0, 0, request.Errorf("--shard env: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set")
	}
	a, b, ok := strings.Cut(s, "/")
	i, e1 := strconv.Atoi(a)
	n, e2 := strconv.Atoi(b)
	if !ok || e1 != nil || e2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, request.Errorf("bad --shard %q: want I/N with 0 ≤ I < N, or env", s)
	}
	return i, n, nil
}

// expandScenes lists the scenes of the arguments: a product or GeoTIFF as
// it is; a folder that is not a product stands for the products and
// GeoTIFFs in it. The list is sorted and without repeats, so that every
// shard sees the same order.
func expandScenes(args []string, list string) ([]string, error) {
	var in []string
	if list != "" {
		f, err := compute.OpenInput(list)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", list, err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				in = append(in, l)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", list, err)
		}
	}
	in = append(in, args...)
	var out []string
	for _, p := range in {
		st, err := os.Stat(p)
		if err != nil {
			// A missing scene fails alone, in its own line.
			out = append(out, p)
			continue
		}
		if st.IsDir() && !scene.IsProductDir(p) {
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", p, unwrapPath(err))
			}
			for _, e := range ents {
				n := e.Name()
				if strings.HasPrefix(n, ".") {
					continue
				}
				if scene.IsProductName(n) || (e.IsDir() && scene.IsProductDir(filepath.Join(p, n))) {
					out = append(out, filepath.Join(p, n))
				}
			}
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if e, ok := err.(*fs.PathError); ok {
		pe = e
		return pe.Err
	}
	return err
}

// outputName is the GeoTIFF a scene's indices go to in DIR: the scene's
// name without its extension (and without .SAFE).
func outputName(dir, scenePath string) string {
	return filepath.Join(dir, scene.Stem(scenePath)+".tif")
}

// fingerprint identifies a scene's inputs (every file's path, size and
// modification time) and the settings of the run.
func fingerprint(scenePath string, settings string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "canopy batch 1\n%s\n", settings)
	if err := hashFiles(h, scenePath); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// hashFiles writes every file under root (root itself when a file) into
// h as a line of its path, size and modification time.
func hashFiles(h io.Writer, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
		return nil
	})
}

// previous reads DIR/batch.jsonl (opened by outfile.OpenJournal: a
// regular file, never a FIFO or a link): the fingerprint of each scene's
// last "done" or "skipped" line.
func previous(f io.ReaderAt) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, 1<<62))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var l batchLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && (l.Status == "done" || l.Status == "skipped") {
			m[l.Scene] = l.Fingerprint
		}
	}
	return m, nil
}

func cmdBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("batch", stderr)
	outDir := fs.String("out", "", "the folder for the outputs and batch.jsonl")
	var pf productFlags
	pf.register(fs, "indices to compute for every scene")
	shard := fs.String("shard", "", "this process's share of the scenes: I/N, or env (Slurm array or Kubernetes Indexed Job)")
	jobs := fs.Int("jobs", 0, "scenes computed at once (0: one per 4 cores, at least 2)")
	list := fs.String("list", "", "a file naming one scene per line")
	progress := fs.String("progress", "auto", "a progress bar on stderr: auto (on a terminal), on or off")
	if err := fs.Parse(args); err != nil {
		return helpOrUsage(fs, err, stdout)
	}
	if *outDir == "" {
		return request.Errorf("--out DIR is required")
	}
	if a := fs.Args(); len(a) > 0 && (a[0] == "composite" || a[0] == "monitor") {
		return batchSeason(ctx, fs, *outDir, *shard, a, stdout, stderr)
	}
	bandMap, sel, err := pf.parse()
	if err != nil {
		return err
	}
	si, sn, err := parseShard(*shard, os.Getenv)
	if err != nil {
		return err
	}
	all, err := expandScenes(fs.Args(), *list)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return request.Errorf("no scene: give PATH... or --list FILE")
	}
	var mine []string
	for k, s := range all {
		if k%sn == si {
			mine = append(mine, s)
		}
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", *outDir, unwrapPath(err))
	}
	k := *jobs
	if k <= 0 {
		k = max(2, runtime.NumCPU()/4)
	}
	k = min(k, max(1, len(mine)))
	settings := fmt.Sprintf("index=%s bands=%s mask=%s buffer=%d", strings.Join(sel.names, ","), pf.bands, pf.mask, pf.buffer)
	if len(pf.scale) > 0 || pf.raw {
		// Only when given, so that earlier runs' fingerprints hold.
		settings += fmt.Sprintf(" scale=%s raw=%v", strings.Join(pf.scale, ";"), pf.raw)
	}
	logPath := filepath.Join(*outDir, "batch.jsonl")
	// The journal follows the outputs' rules (compute/outfile): never
	// through a link, never a FIFO or a device, never a scene or the list.
	logf, err := outfile.OpenJournal(logPath, append(slices.Clone(all), *list)...)
	if err != nil {
		return err
	}
	defer logf.Close()
	done, err := previous(logf)
	if err != nil {
		return err
	}
	shardName := ""
	if sn > 1 {
		shardName = fmt.Sprintf("%d/%d", si, sn)
	}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); (*progress == "on") || (*progress == "auto" && ok && term.IsTerminal(int(f.Fd()))) {
		bar = progressbar.NewOptions(len(mine), progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("scenes"),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetWidth(30), progressbar.OptionClearOnFinish())
	}
	var mu sync.Mutex
	failed, skipped := 0, 0
	record := func(l batchLine) {
		mu.Lock()
		defer mu.Unlock()
		l.Shard, l.Time = shardName, time.Now().UTC().Format(time.RFC3339)
		b, _ := json.Marshal(l)
		// One write per line: appends of whole lines do not interleave.
		logf.Write(append(b, '\n'))
		logf.Sync()
		switch l.Status {
		case "failed":
			failed++
		case "skipped":
			skipped++
		}
		if bar != nil {
			bar.Add(1)
		}
	}
	// One backend for the whole batch, made when the first scene needs it
	// (a re-run that skips everything starts no GPU context): the workers
	// share it, its runs take turns, and what takes the time (decoding,
	// encoding, writing) runs in parallel over the scenes.
	eng := &sharedBackend{name: pf.backend}
	defer eng.close()
	work := make(chan string)
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			for s := range work {
				l := batchScene(ctx, s, *outDir, bandMap, sel, eng, pf.mask, pf.buffer, settings, done[s])
				if l.Status == "failed" && ctx.Err() != nil {
					// Interrupted, not failed: no line, and a re-run
					// computes the scene.
					continue
				}
				record(l)
			}
		})
	}
feed:
	for _, s := range mine {
		select {
		case work <- s:
		case <-ctx.Done():
			break feed // no scene starts after an interrupt
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if bar != nil {
		bar.Finish()
	}
	fmt.Fprintf(stdout, "%d scenes: %d done, %d skipped, %d failed (%s)\n", len(mine), len(mine)-skipped-failed, skipped, failed, logPath)
	if failed > 0 {
		return fmt.Errorf("%d of %d scenes failed (see %s)", failed, len(mine), logPath)
	}
	return nil
}

// sharedBackend is the batch's one backend, picked on first use.
type sharedBackend struct {
	name string
	once sync.Once
	b    compute.Backend
	mode string
	err  error
}

func (s *sharedBackend) get() (compute.Backend, string, error) {
	s.once.Do(func() { s.b, s.mode, s.err = pickBackend(s.name) })
	return s.b, s.mode, s.err
}

func (s *sharedBackend) close() {
	if s.b != nil {
		s.b.Close()
	}
}

// batchScene computes one scene into DIR, or skips it when its output is
// there with the same fingerprint. The scene goes through the block
// pipeline into a Cloud Optimized GeoTIFF, verified, as `canopy compute
// --scene PATH --tif OUT` writes it.
func batchScene(ctx context.Context, s, dir string, bandMap map[string]int, sel selection, eng *sharedBackend, mask string, buffer int, settings, prevFP string) batchLine {
	t0 := time.Now()
	out := outputName(dir, s)
	line := batchLine{Scene: s}
	fp, err := fingerprint(s, settings)
	if err != nil {
		line.Status, line.Error = "failed", oneLine(err)
		return line
	}
	line.Fingerprint = fp
	if _, err := os.Stat(out); err == nil && prevFP == fp {
		line.Status, line.Outputs = "skipped", []string{out}
		line.Seconds = time.Since(t0).Seconds()
		return line
	}
	removeStaleTemps(out)
	err = func() error {
		spec := source.Spec{Product: s, Assign: bandMap, AssignFlag: "--bands", Mask: mask, MaskBuffer: buffer, Scale: sel.scale}
		src, err := source.Open(ctx, spec, source.Options{Roles: sel.roles(), Need: sel.names[0]})
		if err != nil {
			return err
		}
		defer src.Close()
		line.Values = src.Radiometry().String()
		if err := source.CheckValues(src.Radiometry(), sel.names, sel.exprs, sel.raw); err != nil {
			return err
		}
		b, mode, err := eng.get()
		if err != nil {
			return err
		}
		g := src.Grid()
		o, err := openOutputs(append([]string{s}, src.Files()...), out, nil, g.Width, g.Height, g.Geo, sel, pngStyle{}, geotiff.Deflate)
		if err != nil {
			return err
		}
		defer o.abort()
		if _, err := source.Run(ctx, src, source.Job{Backend: b, Mode: mode, Names: sel.names, Exprs: sel.exprs, Verify: true}, withPause(ctx, "block "+filepath.Base(out), o.sinks)...); err != nil {
			return err
		}
		return o.finish()
	}()
	line.Seconds = time.Since(t0).Seconds()
	if err != nil {
		line.Status, line.Error = "failed", oneLine(err)
		return line
	}
	line.Status, line.Outputs = "done", []string{out}
	return line
}

// removeStaleTemps removes the temporary files a killed run (SIGKILL, a
// lost node) left beside out: outfile names them "." + name + ".*.tmp".
func removeStaleTemps(out string) {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp"))
	for _, p := range m {
		os.Remove(p)
	}
}

// oneLine is an error's message on one line in the user's words
// (compute/usererr), as the terminal prints it.
func oneLine(err error) string {
	return usererr.Line(err)
}
