//go:build !unix

package hostile

// paths adds nothing where there are no FIFOs and sockets to make.
func (g *gen) paths() {}
