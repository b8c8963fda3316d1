package index

import "slices"

// Fusions a block interpreter may apply to a program without changing a
// bit of its results: they only save passes over memory.
//
// A normalised difference (a sub, an add of the same two registers and the
// div of the two, in a row, whose partial results are not read again) is
// one pass that rounds as the three do; an output's last finite can write
// the output planes straight away instead of its register; and the two
// together make an NDVI-like index a single pass from the bands to the
// output.

// Fuse is what an instruction becomes in a fused program.
type Fuse uint8

const (
	// FuseNone: the instruction runs as it is.
	FuseNone Fuse = iota
	// FuseSkip: the instruction is part of a later fused one.
	FuseSkip
	// FuseND: this div computes nd(A, B) = (A − B) / (A + B) of the
	// registers in FusedND's answer, into its Dst.
	FuseND
	// FuseStore: this finite writes the outputs whose register it
	// defines straight to their planes (its register is not written).
	FuseStore
	// FuseNDStore: this finite writes nd(A, B), made finite, straight to
	// the outputs (the sub, add and div before it are FuseSkip).
	FuseNDStore
)

// FusionPlan is the fused form of a program: per instruction what it
// becomes, the operands of each fused nd, and where each output is
// written.
type FusionPlan struct {
	// Kind[c] is what instruction c becomes.
	Kind []Fuse
	// A and B are the nd operands for instructions of kind FuseND and
	// FuseNDStore (nd(A, B) = (A − B) / (A + B)).
	A, B []uint16
	// OutAt[o] is the instruction that writes output o's planes (a
	// FuseStore or FuseNDStore), or -1: output o is copied from its
	// register after the code.
	OutAt []int
}

// Fusions returns p's fusion plan.
func (p *Program) Fusions() FusionPlan {
	n := len(p.Code)
	f := FusionPlan{Kind: make([]Fuse, n), A: make([]uint16, n), B: make([]uint16, n)}
	for c := 0; c < n; c++ {
		switch {
		case p.NDStoreAt(c):
			f.Kind[c], f.Kind[c+1], f.Kind[c+2] = FuseSkip, FuseSkip, FuseSkip
			f.Kind[c+3] = FuseNDStore
			f.A[c+3], f.B[c+3] = p.Code[c].A, p.Code[c].B
			c += 3
		case p.NDAt(c):
			f.Kind[c], f.Kind[c+1] = FuseSkip, FuseSkip
			f.Kind[c+2] = FuseND
			f.A[c+2], f.B[c+2] = p.Code[c].A, p.Code[c].B
			c += 2
		}
	}
	for _, r := range p.Outputs {
		c := p.StoringFinite(r)
		if c >= 0 && f.Kind[c] == FuseNone {
			f.Kind[c] = FuseStore
		}
		f.OutAt = append(f.OutAt, c)
	}
	return f
}

// NDAt reports whether instructions c, c+1, c+2 are x = a - b; y = a + b
// (or b + a); z = x / y with x distinct from a, b and y, and neither x nor
// y read after the div (other than as z itself): then z = nd(a, b).
func (p *Program) NDAt(c int) bool {
	code := p.Code
	if c < 0 || c+2 >= len(code) {
		return false
	}
	sub, add, div := code[c], code[c+1], code[c+2]
	if sub.Op != OpSub || add.Op != OpAdd || div.Op != OpDiv {
		return false
	}
	a, b, x, y := sub.A, sub.B, sub.Dst, add.Dst
	if !((add.A == a && add.B == b) || (add.A == b && add.B == a)) {
		return false
	}
	if x == a || x == b || x == y || div.A != x || div.B != y {
		return false
	}
	for _, r := range []uint16{x, y} {
		if r != div.Dst && p.ReadLater(int(r), c+3) {
			return false
		}
	}
	return true
}

// NDStoreAt reports whether a fused nd at c (NDAt) is followed by the
// storing finite of an output (StoringFinite) that reads it, with the nd's
// register not read afterwards: the four become one storing pass.
func (p *Program) NDStoreAt(c int) bool {
	if !p.NDAt(c) || c+3 >= len(p.Code) {
		return false
	}
	z, fin := p.Code[c+2].Dst, p.Code[c+3]
	if fin.Op != OpFinite || fin.A != z || !slices.Contains(p.Outputs, int(fin.Dst)) ||
		p.StoringFinite(int(fin.Dst)) != c+3 {
		return false
	}
	return z == fin.Dst || !p.ReadLater(int(z), c+4)
}

// ReadLater reports whether the value register r holds before instruction
// from is read from there on (by an instruction, or as an output after the
// code).
func (p *Program) ReadLater(r, from int) bool {
	for _, in := range p.Code[from:] {
		n := in.Op.Regs()
		if (n >= 1 && int(in.A) == r) || (n >= 2 && int(in.B) == r) {
			return true
		}
		if int(in.Dst) == r {
			return false
		}
	}
	return slices.Contains(p.Outputs, r)
}

// StoringFinite returns the instruction that can write output register r
// straight to its planes, or -1: the last instruction writing r, when it
// is a finite and no later instruction reads r (so the register itself
// need not be written). Compile ends every output so.
func (p *Program) StoringFinite(r int) int {
	last := -1
	for c, in := range p.Code {
		if int(in.Dst) == r {
			last = c
		}
	}
	if last < 0 || p.Code[last].Op != OpFinite {
		return -1
	}
	for _, in := range p.Code[last+1:] {
		n := in.Op.Regs()
		if (n >= 1 && int(in.A) == r) || (n >= 2 && int(in.B) == r) {
			return -1
		}
	}
	return last
}
