package scene

import "testing"

func TestNames(t *testing.T) {
	for p, want := range map[string]string{
		"/d/S2A_MSIL2A_X.SAFE.zip": "S2A_MSIL2A_X",
		"S2A_MSIL2A_X.SAFE/":       "S2A_MSIL2A_X",
		"LC08_L2SP_X.tar":          "LC08_L2SP_X",
		"stac/item.json":           "item",
		"ortho.tiff":               "ortho",
	} {
		if got := Stem(p); got != want {
			t.Errorf("Stem(%q) = %q, want %q", p, got, want)
		}
	}
	for n, want := range map[string]bool{"a.TIF": true, "b.zip": true, "c.SAFE": true, "d.json": true, "e.txt": false, "f.jp2": false} {
		if IsProductName(n) != want {
			t.Errorf("IsProductName(%q) = %v", n, !want)
		}
	}
	if IsProductDir(t.TempDir()) {
		t.Error("an empty folder is a product")
	}
}
