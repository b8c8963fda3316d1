package hostile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xtiff "golang.org/x/image/tiff"
	"golang.org/x/image/tiff/lzw"
)

func TestGenerate(t *testing.T) {
	cases, err := Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 150 {
		t.Errorf("%d cases, the corpus needs at least 150", len(cases))
	}
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[strings.SplitN(c.Name, "/", 2)[0]]++
		if !c.Loads && !c.Either && c.Want == "" && !strings.HasPrefix(c.Name, "truncated/") && !strings.HasPrefix(c.Name, "png/") && c.Name != "samples/spp-65535" {
			t.Errorf("%s: a refused case without the words it must be refused with", c.Name)
		}
	}
	t.Logf("%d cases: %v", len(cases), kinds)
}

func TestLZWEncoder(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("a"), bytes.Repeat([]byte{0}, 1<<20), []byte(strings.Repeat("forest canopy ", 5000))} {
		r := lzw.NewReader(bytes.NewReader(lzwEncode(in)), lzw.MSB, 8)
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("%d bytes: round trip gives %d bytes, %v", len(in), len(got), err)
		}
	}
	if z := lzwEncode(make([]byte, 4<<20)); len(z) > 4<<20/1000 {
		t.Errorf("4 MiB of zeros encode to %d bytes: no LZW bomb", len(z))
	}
}

// TestBuilderMatchesXImage decodes the builder's valid files with
// golang.org/x/image/tiff, a reader independent of Canopy's, and checks
// every pixel: the corpus's valid files are what they say they are.
func TestBuilderMatchesXImage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []int{cNone, cLZW, cDeflate, cPackBits} {
		for _, tiled := range []bool{false, true} {
			im := base()
			im.comp = c
			if !tiled {
				im.tw, im.th = 0, 8
			}
			if c == cLZW || c == cDeflate {
				im.pred = 2
			}
			b := im.build().bytes()
			os.WriteFile(filepath.Join(dir, "x.tif"), b, 0o644)
			img, err := xtiff.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s tiled=%v: %v", compName(c), tiled, err)
			}
			for y := range im.h {
				for x := range im.w {
					r, _, _, _ := img.At(x, y).RGBA()
					if want := uint32(sample(x, y, 0)); r != want {
						t.Fatalf("%s tiled=%v: pixel (%d, %d) = %d, want %d", compName(c), tiled, x, y, r, want)
					}
				}
			}
		}
	}
	if got := packBits([]byte{1, 1, 1, 2, 3, 4, 4}); !bytes.Equal(got, []byte{0xfe, 1, 1, 2, 3, 0xff, 4}) {
		t.Errorf("packBits: % x", got)
	}
}

func TestGenerateInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("the input corpus takes a while to write (-short)")
	}
	cases, err := GenerateInputs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[strings.SplitN(c.Name, "/", 2)[0]]++
		if c.Exit != 1 && c.Exit != 2 {
			t.Errorf("%s: exit %d", c.Name, c.Exit)
		}
	}
	if len(cases) < 150 {
		t.Errorf("%d input cases, the corpus needs at least 150 more than the raster corpus", len(cases))
	}
	for _, k := range []string{"zip", "tar", "xml", "jp2", "mtl", "stac", "gpkg", "geojson", "list", "session", "path"} {
		if kinds[k] == 0 {
			t.Errorf("no %s cases", k)
		}
	}
	t.Logf("%d input cases: %v", len(cases), kinds)
}
