package composite

import (
	"encoding/json"
	"fmt"
	"image"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"canopy/compute"
)

// numpyScript reads three uint16 bands with Sentinel-2's radiometry, DN 0
// as nodata, and a mask, and writes NumPy's stretch (np.percentile, 2 and
// 98, of the valid pixels) and the RGBA picture it gives.
const numpyScript = `
import json, sys
import numpy as np
d, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mask = np.fromfile(d + "/mask.bin", dtype=np.uint8).reshape(h, w)
dn = [np.fromfile(d + "/b%d.bin" % i, dtype="<u2").reshape(h, w) for i in range(3)]
refl = [(b.astype(np.float64) - 1000.0) / 10000.0 for b in dn]
valid = (mask == 0) & (dn[0] != 0) & (dn[1] != 0) & (dn[2] != 0)
out = np.zeros((h, w, 4), dtype=np.uint8)
bounds = []
for c in range(3):
    lo, hi = np.percentile(refl[c][valid], [2, 98])
    bounds.append([float(lo), float(hi)])
    t = np.clip(255.0 * (refl[c] - lo) / (hi - lo) + 0.5, 0, 255)
    out[..., c] = np.where(valid, np.floor(t), 0).astype(np.uint8)
out[..., 3] = np.where(valid, 255, 0)
out.tofile(d + "/rgba.bin")
json.dump(bounds, open(d + "/bounds.json", "w"))
`

// TestAgainstNumPy: the stretch and the picture equal NumPy's (skipped
// without python3 and NumPy).
func TestAgainstNumPy(t *testing.T) {
	py := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no python3 with NumPy (Debian python3-numpy)")
	}
	const w, h = 173, 119
	rng := rand.New(rand.NewPCG(21, 22))
	bands := [3]compute.BandInput{u16Band(rng, "red", w, h, 1000, 3500), u16Band(rng, "green", w, h, 1100, 2600), u16Band(rng, "blue", w, h, 1050, 1900)}
	mask := randomMask(rng, w*h)
	dir := t.TempDir()
	for i, b := range bands {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("b%d.bin", i)), b.Plane.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "mask.bin"), mask, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-c", numpyScript, dir, fmt.Sprint(w), fmt.Sprint(h)).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v: %s", err, strings.TrimSpace(string(out)))
	}
	var bounds [3][2]float64
	raw, err := os.ReadFile(filepath.Join(dir, "bounds.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &bounds); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "rgba.bin"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(bands, mask, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range c.Channels() {
		if !near(ch.Lo, bounds[i][0], 1e-12) || !near(ch.Hi, bounds[i][1], 1e-12) {
			t.Errorf("channel %d: stretch %v … %v, NumPy %v … %v", i, ch.Lo, ch.Hi, bounds[i][0], bounds[i][1])
		}
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	c.RenderView(img, 0, 0, 1)
	off := 0
	for i, v := range img.Pix {
		d := int(v) - int(want[i])
		if d < -1 || d > 1 || (i%4 == 3 && d != 0) {
			t.Fatalf("pixel %d channel %d: %d, NumPy %d", i/4, i%4, v, want[i])
		}
		if d != 0 {
			off++
		}
	}
	// float32 rounding may move a value across a half; rarely.
	if off > len(img.Pix)/100 {
		t.Errorf("%d of %d samples differ by one from NumPy's", off, len(img.Pix))
	}
}
