//go:build unix

package hostile

import (
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
