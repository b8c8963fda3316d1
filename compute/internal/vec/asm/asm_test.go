package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesUpToDate runs the generator as go generate does (the same
// arguments, so the same header) in a copy of this folder and compares what
// it writes with the files committed in package vec.
func TestGeneratedFilesUpToDate(t *testing.T) {
	tmp := t.TempDir()
	gen := filepath.Join(tmp, "asm")
	if err := os.Mkdir(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"asm.go", "go.mod", "go.sum"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gen, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".", "-out", "../vec_amd64.s", "-stubs", "../stub_amd64.go", "-pkg", "vec", "-other", "../stub_other.go")
	cmd.Dir = gen
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, out)
	}
	for _, f := range []string{"vec_amd64.s", "stub_amd64.go", "stub_other.go"} {
		want, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the generator writes: run go generate ./compute/internal/vec and commit", f)
		}
	}
}

// TestVecGenerateLine checks that the go:generate line in package vec passes
// the arguments this test uses.
func TestVecGenerateLine(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "vec.go"))
	if err != nil {
		t.Fatal(err)
	}
	line := "//go:generate go run -C asm . -out ../vec_amd64.s -stubs ../stub_amd64.go -pkg vec -other ../stub_other.go\n"
	if !bytes.Contains(src, []byte(line)) {
		t.Errorf("vec.go lacks %q", line)
	}
}
