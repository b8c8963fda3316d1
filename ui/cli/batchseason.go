package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"canopy/compute"
	"canopy/compute/geotiff"
	"canopy/compute/outfile"
	"canopy/compute/request"
	"canopy/compute/source"
	"canopy/compute/stack"
)

// batchSeason is `canopy batch --out DIR [--shard I/N|env] composite|monitor
// ARGS... --tif NAME.tif`: this process's part of the area (--shard, by
// bands of 512 rows) of the composite or monitor ARGS describe, into
// DIR/NAME.part-I-of-N.tif, journalled in DIR/batch.jsonl as scenes are
// (skipped when done with the same inputs and settings); the process
// that finds every part done merges them into DIR/NAME.tif, the file the
// whole run writes, bit for bit.
func batchSeason(ctx context.Context, fs *flag.FlagSet, dir, shard string, args []string, stdout, stderr io.Writer) error {
	cmd, rest := args[0], args[1:]
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "out" && f.Name != "shard" && f.Name != "progress" {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return request.Errorf("%s: with a %s job, give the %s flags after %s (canopy batch --out DIR --shard I/N %s STACK... --tif NAME.tif)", strings.Join(bad, ", "), cmd, cmd, cmd, cmd)
	}
	tif := ""
	var own []string // the command's arguments without --tif
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			own = append(own, a)
			continue
		}
		switch name {
		case "tif":
			if !hasVal {
				if i+1 >= len(rest) {
					return request.Errorf("--tif needs a file name")
				}
				i++
				val = rest[i]
			}
			tif = val
			continue
		case "shard", "json", "png", "layout", "stands", "csv", "gpkg":
			return request.Errorf("--%s is not for a %s job of batch (its parts are GeoTIFFs; batch's own --shard picks the part)", name, cmd)
		}
		own = append(own, a)
	}
	if tif == "" {
		return request.Errorf("a %s job needs --tif NAME.tif (written in --out's folder)", cmd)
	}
	si, sn, err := parseShard(shard, os.Getenv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, unwrapPath(err))
	}
	whole := filepath.Join(dir, filepath.Base(tif))
	part := partName(whole, si, sn)
	var inputs []string // the arguments that name files: read, never written
	for _, a := range own {
		if _, v, ok := strings.Cut(a, "="); ok {
			a = v
		}
		if _, err := os.Stat(a); err == nil {
			inputs = append(inputs, a)
		}
	}
	fp, err := seasonFingerprint(cmd, own, inputs)
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "batch.jsonl")
	logf, err := outfile.OpenJournal(logPath, inputs...)
	if err != nil {
		return err
	}
	defer logf.Close()
	record := func(l batchLine) {
		l.Time = time.Now().UTC().Format(time.RFC3339)
		b, _ := json.Marshal(l)
		logf.Write(append(b, '\n'))
		logf.Sync()
	}
	t0 := time.Now()
	line := batchLine{Scene: part, Shard: fmt.Sprintf("%d/%d", si, sn), Fingerprint: fp}
	prev := lastLines(logf)
	if p, ok := prev[part]; ok && p.Fingerprint == fp && (len(p.Outputs) == 0 || exists(part)) {
		line.Status, line.Outputs, line.Bands = "skipped", p.Outputs, p.Bands
	} else {
		removeStaleTemps(part)
		var out bytes.Buffer
		run := cmdComposite
		if cmd == "monitor" {
			run = cmdMonitor
		}
		err := run(ctx, append(slices.Clone(own), "--tif", whole, "--shard", line.Shard, "--json"), &out, stderr)
		var rep seasonReport
		if err == nil {
			err = json.Unmarshal(out.Bytes(), &rep)
		}
		if err != nil {
			if ctx.Err() != nil {
				return err // interrupted: not journalled
			}
			line.Status, line.Error = "failed", oneLine(err)
			line.Seconds = time.Since(t0).Seconds()
			record(line)
			return fmt.Errorf("%s part %s failed (see %s): %w", cmd, line.Shard, logPath, err)
		}
		line.Status, line.Bands = "done", rep.Bands
		if rep.Tif != "" {
			line.Outputs = []string{rep.Tif}
		}
	}
	line.Seconds = time.Since(t0).Seconds()
	record(line)
	fmt.Fprintf(stdout, "%s part %s: %s %s\n", cmd, line.Shard, line.Status, strings.Join(line.Outputs, " "))
	// The process that finds every part done merges them.
	prev = lastLines(logf)
	var parts []string
	var bands []string
	var waiting []string
	for i := range sn {
		name := partName(whole, i, sn)
		p, ok := prev[name]
		if !ok || p.Fingerprint != fp || (len(p.Outputs) > 0 && !exists(name)) {
			waiting = append(waiting, fmt.Sprintf("%d", i))
			continue
		}
		parts = append(parts, p.Outputs...)
		if len(p.Bands) > 0 {
			bands = p.Bands
		}
	}
	if len(waiting) > 0 {
		fmt.Fprintf(stdout, "waiting for parts %s of %d: the process that finishes the last one merges them into %s\n", strings.Join(waiting, ", "), sn, whole)
		return nil
	}
	if p, ok := prev[whole]; ok && p.Fingerprint == fp && exists(whole) {
		fmt.Fprintf(stdout, "%s is merged already\n", whole)
		return nil
	}
	t1 := time.Now()
	if err := mergeParts(whole, parts, bands); err != nil {
		record(batchLine{Scene: whole, Status: "failed", Error: oneLine(err), Fingerprint: fp, Shard: fmt.Sprintf("merge of %d", sn), Seconds: time.Since(t1).Seconds()})
		return err
	}
	record(batchLine{Scene: whole, Status: "done", Outputs: []string{whole}, Fingerprint: fp, Shard: fmt.Sprintf("merge of %d", sn), Seconds: time.Since(t1).Seconds()})
	fmt.Fprintf(stdout, "merged %d parts into %s\n", sn, whole)
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// seasonFingerprint identifies a season job: the command, its arguments
// and every file its arguments name (path, size, modification time).
func seasonFingerprint(cmd string, args, inputs []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "canopy batch %s 1\n%q\n", cmd, args)
	for _, in := range inputs {
		if err := hashFiles(h, in); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// lastLines reads the journal: the last done or skipped line of each
// scene (or part, or merged file).
func lastLines(f io.ReaderAt) map[string]batchLine {
	m := map[string]batchLine{}
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, 1<<62))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var l batchLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && (l.Status == "done" || l.Status == "skipped") {
			m[l.Scene] = l
		}
	}
	return m
}

// mergeParts writes the parts (in order, from the top; every part of the
// same width, each georeferenced where it lies below the one before) as
// one COG whose bands are named bands: the file the whole run writes.
func mergeParts(whole string, parts, bands []string) error {
	if len(parts) == 0 {
		return fmt.Errorf("%s: no part holds any row", whole)
	}
	var files []*geotiff.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	g := source.Grid{}
	for i, p := range parts {
		f, err := geotiff.Open(p)
		if err != nil {
			return err
		}
		files = append(files, f)
		if i == 0 {
			g.Width, g.Geo = f.Width(), f.Geo()
		}
		if f.Width() != g.Width || f.Bands() != len(bands) || f.Type() != geotiff.Float32 {
			return fmt.Errorf("%s: %d×%d, %d bands: not a part of %s (%d wide, %d bands of float32)", p, f.Width(), f.Height(), f.Bands(), whole, g.Width, len(bands))
		}
		at := stack.Rows(g, g.Height, g.Height+f.Height())
		if (at.Geo == nil) != (f.Geo() == nil) || at.Geo != nil && !at.Geo.SameGrid(f.Geo()) {
			return fmt.Errorf("%s is not georeferenced below the part before it: the parts of %s do not line up", p, whole)
		}
		g.Height += f.Height()
	}
	set := outfile.NewSet(parts...)
	defer set.Abort()
	w, err := set.Create(whole)
	if err != nil {
		return err
	}
	var out io.WriterAt = w
	if wr := wrapOutput(w); wr != outWriter(w) {
		out = wr
	}
	cog, err := source.NewCOG(out, whole, g, bands, geotiff.Deflate, filepath.Dir(whole))
	if err != nil {
		return err
	}
	idx := make([]int, len(bands))
	for i := range idx {
		idx[i] = i + 1
	}
	y := 0
	for _, f := range files {
		for y0 := 0; y0 < f.Height(); y0 += stack.PartRows {
			y1 := min(y0+stack.PartRows, f.Height())
			planes := make([][]float32, len(bands))
			dst := make([]compute.Plane, len(bands))
			for b := range planes {
				planes[b] = make([]float32, g.Width*(y1-y0))
				dst[b] = compute.PlaneOf(g.Width, y1-y0, planes[b])
			}
			if err := f.ReadRowsBandsInto(y0, y1, idx, dst); err != nil {
				cog.Abort()
				return err
			}
			if err := cog.WriteRows(y+y0, y1-y0, planes); err != nil {
				cog.Abort()
				return err
			}
		}
		y += f.Height()
	}
	if err := cog.Close(); err != nil {
		return err
	}
	return set.Commit()
}
