package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzReadSession: any bytes as a session file: a session or one line
// naming the file, never a panic or a hang; what reads gives options.
func FuzzReadSession(f *testing.F) {
	f.Add([]byte(`{"version":1,"product":"S2A.zip","index":"ndvi","ramp":"rdylgn","stretch":"fixed","zoom":2,"x0":10,"y0":20}`))
	f.Add([]byte(`{"version":1,"bands":{"red":"/dev/zero","nir":"b.tif:2"},"expr":"(nir-red)/(nir+red)","classes":[{"max":0,"name":"x","colour":"#ff0000"}],"ramp":"","stretch":""}`))
	f.Add([]byte(`{"version":1,"fake":"landscape","size":1e300,"seed":18446744073709551615,"after":{"version":1,"after":{"version":1}}}`))
	f.Add([]byte(`{"version":1,"after":` + strings.Repeat(`{"after":`, 3000) + `null` + strings.Repeat(`}`, 3001)))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "view.canopy.json")
		os.WriteFile(p, b, 0o644)
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("readSession still busy after 10 s on %d bytes", len(b)))
			}
		}()
		s, err := readSession(p)
		if err != nil {
			if m := err.Error(); strings.ContainsAny(m, "\r\n") || !strings.Contains(m, p) {
				t.Fatalf("the error is not one line naming the file: %.300q", m)
			}
			return
		}
		s.options(options{})
	})
}
