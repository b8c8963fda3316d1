package ui

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestMainBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--size", "abc"},
		{"--size", "0"},
		{"--seed", "-3"},
		{"--scene", "desert"},
		{"--red", "red.tif"},
		{"--exit-after", "soon"},
		{"--ramp", "rainbow"},
		{"--window", "10x10"},
		{"--repeat", "0"},
		{"--nope"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		msg := errb.String()
		if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "canopy gui: ") {
			t.Errorf("%v: stderr %q, want one line", args, msg)
		}
		if out.Len() != 0 {
			t.Errorf("%v: stdout %q", args, out.String())
		}
	}
}

func TestMainHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"--red", "--nir", "--scene", "--size", "--seed", "--backend", "--screenshot", "--exit-after"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("usage lacks %s", f)
		}
	}
}

func TestParseFlags(t *testing.T) {
	f, err := parseFlags([]string{"--red", "r.tif:3", "--nir", "n.tif:4", "--size", "512", "--seed", "9",
		"--backend", "cuda:overlapped", "--ramp", "viridis", "--exit-after", "2s", "--screenshot", "s.png", "--window", "1600x1000"})
	if err != nil {
		t.Fatal(err)
	}
	o := f.opts
	if o.Bands["red"] != "r.tif:3" || o.Bands["nir"] != "n.tif:4" || o.Size != 512 || o.Seed != 9 || o.Backend != "cuda:overlapped" ||
		f.ramp != "viridis" || f.exitAfter != 2*time.Second || f.screenshot != "s.png" || o.WindowSize.Width != 1600 {
		t.Errorf("parsed %+v", f)
	}
	f, err = parseFlags(nil)
	if err != nil || f.opts.Size != 2048 || f.opts.Fake != "landscape" || f.opts.Index != "ndvi" || f.opts.Backend != "auto" || f.opts.Seed != 1 {
		t.Errorf("defaults %+v, %v", f, err)
	}
}
