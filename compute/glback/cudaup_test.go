package glback

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"canopy/compute"
	"canopy/compute/computetest"
)

// uploadScene is a scene in several parts whose bands take every path of
// a CUDA upload: red and NIR are halves of one slice (their page-rounded
// ranges merge into one registration), the float32 band is a slice of its
// own, and the mask is small enough to be copied from pageable memory.
func uploadScene() ([]compute.BandInput, []uint8) {
	const w, h = 1501, 1499 // 4.5 MB a uint16 band: above regMin
	g := rand.New(rand.NewPCG(16, 3))
	pair := make([]uint16, 2*w*h)
	for i := range pair {
		pair[i] = uint16(g.Uint32())
	}
	blue := make([]float32, w*h)
	for i := range blue {
		blue[i] = g.Float32()*2 - 0.5
	}
	mask := make([]uint8, w*h)
	for i := range mask {
		mask[i] = uint8(g.Uint32())
	}
	return []compute.BandInput{
		{Role: "red", Plane: compute.PlaneOf(w, h, pair[:w*h])},
		{Role: "nir", Plane: compute.PlaneOf(w, h, pair[w*h:])},
		{Role: "blue", Plane: compute.PlaneOf(w, h, blue)},
	}, mask
}

// devicePlanes opens a session of the scene and reads its band and mask
// planes back from the device, with the path their upload took.
func devicePlanes(t *testing.T, b *Backend, bands []compute.BandInput, mask []uint8) ([][]byte, string) {
	t.Helper()
	rs, _, err := b.OpenResident(bands, mask)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	s := rs.(*session)
	if s.parts() < 2 {
		t.Fatalf("the scene is in %d part: the test needs several", s.parts())
	}
	var planes []*devPlane
	for i := range s.dBands {
		planes = append(planes, &s.dBands[i])
	}
	planes = append(planes, s.dMask)
	var out [][]byte
	err = b.w.do(func(st *glState) error {
		for _, d := range planes {
			buf := make([]byte, s.n*d.size)
			if err := st.downloadPlanes(s.part, []*devPlane{d}, [][]byte{buf}, ModeSubData); err != nil {
				return err
			}
			out = append(out, buf)
		}
		return glError("reading the bands back")
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, s.upPath
}

// On planes in CUDA memory a session's bands go up through CUDA
// (page-locked, and through the staging buffers when every large band is
// staged): the device planes equal, bit for bit, those GL's path uploads,
// and the bands as given. Where the planes are in GL memory (llvmpipe) the
// session keeps GL's path, checked the same way before the test skips.
func TestResidentCUDAUpload(t *testing.T) {
	b := New()
	b.tu.part = 1 << 18 // several parts (at least a granule each in CUDA memory)
	t.Cleanup(func() { b.Close() })
	need(t, b)
	var inCUDA bool
	var note string
	if err := b.w.do(func(st *glState) error { inCUDA, note = st.mem != nil, st.memNote; return nil }); err != nil {
		t.Fatal(err)
	}
	bands, mask := uploadScene()
	want := [][]byte{bands[0].Plane.Data, bands[1].Plane.Data, bands[2].Plane.Data, mask}
	names := []string{"red", "nir", "blue", "mask"}
	same := func(what string, got [][]byte) {
		t.Helper()
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				k := 0
				for k < len(want[i]) && got[i][k] == want[i][k] {
					k++
				}
				t.Errorf("%s: the %s plane differs from the band from byte %d of %d", what, names[i], k, len(want[i]))
			}
		}
	}
	b.tu.residentUpload = upGL
	viaGL, path := devicePlanes(t, b, bands, mask)
	if !strings.HasPrefix(path, upGL+" ") {
		t.Fatalf("a session asked for GL's path went up by %q", path)
	}
	same("GL's upload", viaGL)
	b.tu.residentUpload = ""
	got, path := devicePlanes(t, b, bands, mask)
	if !inCUDA {
		if !strings.HasPrefix(path, upGL+" ") {
			t.Errorf("planes in GL memory went up by %q, not GL's path", path)
		}
		computetest.SkipUnlessGPU(t, false, "the planes are not in CUDA memory here ("+note+"): the CUDA upload does not run")
	}
	t.Logf("%s; default upload: %s", note, path)
	if path != upCUDA {
		t.Errorf("planes in CUDA memory went up by %q, want %q (the bands page-locked)", path, upCUDA)
	}
	same("the CUDA upload", got)
	for i := range got {
		if !bytes.Equal(got[i], viaGL[i]) {
			t.Errorf("the %s plane uploaded through CUDA differs from GL's upload", names[i])
		}
	}
	b.tu.residentUpload = upCUDAStaged
	staged, path := devicePlanes(t, b, bands, mask)
	if !strings.HasPrefix(path, upCUDAStaged) {
		t.Errorf("a staged upload went up by %q", path)
	}
	same("the staged CUDA upload", staged)
	for i := range staged {
		if !bytes.Equal(staged[i], viaGL[i]) {
			t.Errorf("the %s plane uploaded through CUDA's staging differs from GL's upload", names[i])
		}
	}
}
