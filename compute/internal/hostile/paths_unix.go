//go:build unix

package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// paths adds what is not a file: a FIFO (a reader that opens it waits
// for a writer forever), a socket and a device.
func (g *gen) paths() {
	fifo := filepath.Join(g.dir, "pipe.tif")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil && g.err == nil {
		g.err = err
	}
	g.add(Case{Name: "path/fifo", Red: fifo, Want: "is a named pipe (FIFO), not a file"})
	g.add(Case{Name: "path/fifo-as-nir", Red: g.file("fifo-red.tif", base().build().bytes()), NIR: fifo, Want: "is a named pipe"})
	sock := filepath.Join(g.dir, "socket.tif")
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil && g.err == nil {
			g.err = err
		}
		syscall.Close(fd)
		g.add(Case{Name: "path/socket", Red: sock, Want: "is a socket, not a file"})
	}
	g.add(Case{Name: "path/dev-zero", Red: "/dev/zero", Want: "is a device, not a file"})
	g.add(Case{Name: "path/dev-zero-band", Red: "/dev/zero:1", Want: "is a device, not a file"})
}

// specialPaths are the paths that are not regular files: those of every
// system, a FIFO (whose reader would wait for a writer forever) and a
// link to /dev/zero (whose reader would never reach the end).
func (g *igen) specialPaths() []special {
	n := 0
	return append(g.commonSpecials(),
		special{"fifo", "is a named pipe (FIFO), not a file", func(ext string) string {
			n++
			p := filepath.Join(g.dir, "special", fmt.Sprintf("fifo-%d%s", n, ext))
			g.fail(syscall.Mkfifo(p, 0o644))
			return p
		}},
		special{"dev-zero", "is a device, not a file", func(ext string) string {
			n++
			p := filepath.Join(g.dir, "special", fmt.Sprintf("zero-%d%s", n, ext))
			g.fail(os.Symlink("/dev/zero", p))
			return p
		}},
	)
}
