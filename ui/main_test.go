package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"canopy/compute/index"
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
		{"--index", "ndvx"},
		{"--expr", "nir - * red"},
		{"--index", "evi", "--expr", "nir"},
		{"--scene", "no/such/product.SAFE"},
		{"--band", "purple=x.tif"},
		{"--band", "red"},
		{"--red", "a.tif", "--band", "red=b.tif"},
		{"--red", "a.tif", "--nir", "b.tif", "--index", "evi"},
		{"--mask", "clouds"},
		{"--mask-buffer", "-1"},
		{"--ramp", "classes", "--index", "evi"},
		{"--fake", "desert"},
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

// TestMainMessages: the one-line messages say what is wrong.
func TestMainMessages(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expr", "nir - * red"}, "column 7"},
		{[]string{"--red", "a.tif", "--nir", "b.tif", "--index", "evi"}, "evi needs the blue band: give it with --band blue=FILE[:BAND]"},
		{[]string{"--red", "a.tif"}, "ndvi needs the nir band"},
		{[]string{"--index", "ndvx"}, "unknown --index \"ndvx\""},
		{[]string{"--scene", "no/such/product.SAFE"}, "no such file or folder"},
	} {
		var out, errb bytes.Buffer
		run(c.args, &out, &errb)
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: %q, want %q", c.args, errb.String(), c.want)
		}
	}
}

func TestMainHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"--red", "--nir", "--band", "--scene", "--fake", "--index", "--expr", "--mask", "--mask-buffer",
		"--size", "--seed", "--backend", "--screenshot", "--exit-after", strings.Join(index.Roles[:4], " "), strings.Join(index.Roles[4:], " ")} {
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
	f, err = parseFlags([]string{"--band", "swir1=s.tif:11", "--band", "nir=n.tif", "--expr", "(nir - swir1) / (nir + swir1)", "--scene", "noise"})
	if err != nil || f.opts.Bands["swir1"] != "s.tif:11" || f.opts.Expr != "(nir - swir1) / (nir + swir1)" || f.opts.Fake != "noise" || f.opts.Product != "" {
		t.Errorf("bands, expr and --scene noise: %+v, %v", f.opts, err)
	}
	dir := t.TempDir()
	f, err = parseFlags([]string{"--scene", dir, "--index", "NBR", "--mask", "none", "--mask-buffer", "3"})
	if err != nil || f.opts.Product != dir || f.opts.Index != "nbr" || f.opts.Mask != "none" || f.opts.MaskBuffer != 3 {
		t.Errorf("a product: %+v, %v", f.opts, err)
	}
	f, err = parseFlags(nil)
	if err != nil || f.opts.Size != 2048 || f.opts.Fake != "landscape" || f.opts.Index != "ndvi" || f.opts.Backend != "auto" || f.opts.Seed != 1 {
		t.Errorf("defaults %+v, %v", f, err)
	}
}

// TestGUIBandsFlag: canopy gui takes --bands ROLE=B,... for a --scene, as
// canopy scene suggests it, and refuses it without one.
func TestGUIBandsFlag(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cam.tif")
	if err := os.WriteFile(p, []byte("II*\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := parseFlags([]string{"--scene", p, "--bands", "red=1,nir=2"})
	if err != nil || f.opts.Assign["red"] != 1 || f.opts.Assign["nir"] != 2 {
		t.Errorf("--bands: %v %v", f.opts.Assign, err)
	}
	if _, err := parseFlags([]string{"--bands", "red=1,nir=2"}); err == nil || !strings.Contains(err.Error(), "--bands names the bands of a --scene") {
		t.Errorf("--bands without --scene: %v", err)
	}
}
