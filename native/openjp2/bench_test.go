package openjp2

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkDecodeFiles decodes the JP2 files listed in CANOPY_JP2_BENCH
// (separated by commas), e.g. a 10980² B04 and B08 made by
// scripts/bench-products; it is skipped when the variable is unset.
func BenchmarkDecodeFiles(b *testing.B) {
	list := os.Getenv("CANOPY_JP2_BENCH")
	if list == "" {
		b.Skip("CANOPY_JP2_BENCH is not set")
	}
	for b.Loop() {
		for _, p := range strings.Split(list, ",") {
			d, err := openFile(b, p)
			if err != nil {
				b.Fatal(err)
			}
			pl, err := d.Decode(Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(pl.Data)))
		}
	}
}
