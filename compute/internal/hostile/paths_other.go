//go:build !unix

package hostile

// paths adds nothing where there are no FIFOs and sockets to make.
func (g *gen) paths() {}

// specialPaths are the paths that are not regular files that this system
// can make.
func (g *igen) specialPaths() []special { return g.commonSpecials() }
