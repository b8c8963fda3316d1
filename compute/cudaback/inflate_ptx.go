package cudaback

import (
	"fmt"

	"canopy/compute"
	"canopy/compute/geotiff"
)

// The inflate and placement kernels: a band's DEFLATE chunks (a GeoTIFF's
// tiles or strips, uploaded as stored) inflated on the device, one thread
// a chunk, and the decoded chunks placed into the band's plane with the
// horizontal predictor undone, one thread a chunk row. The decoder follows
// RFC 1951 the way zlib's puff does (canonical codes from counts and
// sorted symbols), with a lookup table in shared memory for the short
// codes and puff's bit-by-bit walk for the rest. It is stricter than the
// host's decoders, never more lenient: any stream it does not decode
// completely, exactly and within its chunk is reported, and the host then
// decodes the band itself (so that its result or its error is the host
// reader's, word for word).
//
// Each thread reads only its stream's bytes and the padding after the
// last one (loads past a stream's end are counted and refused), writes
// only its chunk's output slot (every store is checked against the slot's
// size first) and stops: every step consumes input bits or produces
// output bytes, and both are bounded.

// Entry points.
const (
	inflateEntry = "canopy_inflate"
	placeEntry   = "canopy_place"
)

// inflatePad is the zero bytes the host puts after the last stream, so
// that the bit reader's 4-byte loads past a stream's end stay in the
// buffer.
const inflatePad = geotiff.Pad

// A chunk's status, as the inflate kernel writes it.
const (
	inflateOK      = 0
	inflateCorrupt = 1 // not a valid DEFLATE stream (or one the kernel refuses)
	inflateLong    = 2 // decodes to more than the chunk holds
	inflateShort   = 3 // ends before the rows the image shows
	inflateOverrun = 4 // reads past its bytes
)

// The per-thread (per-block: a block is one thread) shared memory: the
// decoding tables and the code lengths.
const (
	infLitBits  = 10 // bits of the literal/length lookup table
	infDistBits = 8  // bits of the distance lookup table
	infCLBits   = 7  // the code-length code's longest code

	infLT   = 0                        // literal/length table, u16 entries: symbol | length<<9
	infDT   = infLT + 2<<infLitBits    // distance table
	infCT   = infDT + 2<<infDistBits   // code-length table
	infLC   = infCT + 2<<infCLBits     // literal/length counts by length, 16 u16
	infDC   = infLC + 32               // distance counts
	infCC   = infDC + 32               // code-length counts
	infOFF  = infCC + 32               // offsets while sorting, 16 u16
	infLS   = infOFF + 32              // literal/length symbols by code, 288 u16
	infDS   = infLS + 2*288            // distance symbols, 32 u16
	infCS   = infDS + 2*32             // code-length symbols, 19 u16 (20)
	infLENS = infCS + 2*20             // code lengths, 320 u8
	infCLL  = infLENS + 320            // code-length code lengths, 19 u8 (24)
	infSize = (infCLL + 24 + 15) &^ 15 // bytes of the shared array
)

// infOrder is the order of the code-length code's lengths (RFC 1951 3.2.7).
var infOrder = [19]int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// infGen writes the inflate kernel.
type infGen struct {
	*ptxBuilder
	sm                  string // the shared array's address (u64)
	bb, pos, lim, end   string // bit buffer, next byte, load limit, stream end (u64)
	start               string // stream start (u64)
	bc, o, cap          string // bits in bb, bytes written, the chunk's size (u32)
	out                 string // the chunk's output slot (u64)
	op                  string // out + o, where the next byte goes (u64)
	errCorrupt, errLong string
	errOverrun          string
}

func (g *infGen) r32() string { return g.reg(rR) }
func (g *infGen) r64() string { return g.reg(rRD) }
func (g *infGen) p() string   { return g.reg(rP) }

// imm32 puts an immediate into a new register.
func (g *infGen) imm32(v int) string {
	r := g.r32()
	g.ins("mov.u32 %s, %d", r, v)
	return r
}

// at is the shared address of byte offset off plus idx·scale (idx a u32
// register, "" for none).
func (g *infGen) at(off int, idx string, scale int) string {
	a := g.r64()
	if idx == "" {
		g.ins("add.u64 %s, %s, %d", a, g.sm, off)
		return a
	}
	i := g.r64()
	g.ins("mul.wide.u32 %s, %s, %d", i, idx, scale)
	g.ins("add.u64 %s, %s, %s", a, g.sm, i)
	if off != 0 {
		g.ins("add.u64 %s, %s, %d", a, a, off)
	}
	return a
}

// ldsh loads a shared u16 (or u8 with size 1) into a new register.
func (g *infGen) ldsh(off int, idx string, size int) string {
	r := g.r32()
	g.ins("ld.shared.u%d %s, [%s]", 8*size, r, g.at(off, idx, size))
	return r
}

// stsh stores v (register) as a shared u16 (or u8).
func (g *infGen) stsh(off int, idx string, size int, v string) {
	g.ins("st.shared.u%d [%s], %s", 8*size, g.at(off, idx, size), v)
}

// branch jumps to l when cmp holds between a and b (u32).
func (g *infGen) branch(cmp, a, b, l string) {
	p := g.p()
	g.ins("setp.%s.u32 %s, %s, %s", cmp, p, a, b)
	g.ins("@%s bra %s", p, l)
}

// count runs body with i (a u32 register, moved on) from its value up
// to n (a register or an immediate), one at a time.
func (g *infGen) count(i, n string, body func()) {
	loop, done := g.label(), g.label()
	g.place(loop)
	g.branch("ge", i, n, done)
	body()
	g.ins("add.u32 %s, %s, 1", i, i)
	g.ins("bra %s", loop)
	g.place(done)
}

// refill makes the bit buffer hold at least 32 bits (one aligned 4-byte
// load when it holds fewer; align has made pos a multiple of 4), or goes
// to the overrun error.
func (g *infGen) refill() {
	skip := g.label()
	g.branch("ge", g.bc, "32", skip)
	p := g.p()
	g.ins("setp.gt.u64 %s, %s, %s", p, g.pos, g.lim)
	g.ins("@%s bra %s", p, g.errOverrun)
	g.take(4)
	g.place(skip)
}

// align takes bytes one at a time into the buffer (empty: at a stream's
// start or after a stored block) until pos is a multiple of 4, for
// refill's aligned loads.
func (g *infGen) align() {
	loop, done := g.label(), g.label()
	g.place(loop)
	lo := g.r32()
	g.ins("cvt.u32.u64 %s, %s", lo, g.pos)
	g.ins("and.b32 %s, %s, 3", lo, lo)
	g.branch("eq", lo, "0", done)
	g.take(1)
	g.ins("bra %s", loop)
	g.place(done)
}

// take loads the n bytes (1 or 4) at pos above the buffer's bits and
// moves pos on.
func (g *infGen) take(n int) {
	w := g.r32()
	g.ins("ld.global.nc.u%d %s, [%s]", 8*n, w, g.pos)
	w64 := g.r64()
	g.ins("cvt.u64.u32 %s, %s", w64, w)
	g.ins("shl.b64 %s, %s, %s", w64, w64, g.bc)
	g.ins("or.b64 %s, %s, %s", g.bb, g.bb, w64)
	g.ins("add.u32 %s, %s, %d", g.bc, g.bc, 8*n)
	g.ins("add.u64 %s, %s, %d", g.pos, g.pos, n)
}

// bits takes n bits (an immediate or a u32 register, at most 16) from the
// buffer, which holds enough.
func (g *infGen) bits(n string) string {
	lo := g.r32()
	g.ins("cvt.u32.u64 %s, %s", lo, g.bb)
	v := g.r32()
	if n[0] != '%' {
		var k int
		fmt.Sscan(n, &k)
		g.ins("and.b32 %s, %s, %d", v, lo, 1<<k-1)
	} else {
		m := g.imm32(1)
		g.ins("shl.b32 %s, %s, %s", m, m, n)
		g.ins("sub.u32 %s, %s, 1", m, m)
		g.ins("and.b32 %s, %s, %s", v, lo, m)
	}
	g.ins("shr.u64 %s, %s, %s", g.bb, g.bb, n)
	g.ins("sub.u32 %s, %s, %s", g.bc, g.bc, n)
	return v
}

// decode decodes one symbol with the table at tbl (tbits bits) and, for
// longer codes, the counts and symbols at cnt and sym; the buffer holds at
// least 15 bits. An invalid code goes to the corrupt error.
func (g *infGen) decode(tbl, tbits, cnt, sym int) string {
	out := g.r32()
	slow, done := g.label(), g.label()
	lo := g.r32()
	g.ins("cvt.u32.u64 %s, %s", lo, g.bb)
	idx := g.r32()
	g.ins("and.b32 %s, %s, %d", idx, lo, 1<<tbits-1)
	e := g.ldsh(tbl, idx, 2)
	g.branch("eq", e, "0", slow)
	n := g.r32()
	g.ins("shr.u32 %s, %s, 9", n, e)
	g.ins("and.b32 %s, %s, 511", out, e)
	g.ins("shr.u64 %s, %s, %s", g.bb, g.bb, n)
	g.ins("sub.u32 %s, %s, %s", g.bc, g.bc, n)
	g.ins("bra %s", done)

	// puff's decode: the code's bits one at a time against the count of
	// codes of each length.
	g.place(slow)
	code, first, index, l := g.imm32(0), g.imm32(0), g.imm32(0), g.imm32(1)
	loop, found := g.label(), g.label()
	g.place(loop)
	b := g.r32()
	sh := g.r32()
	g.ins("sub.u32 %s, %s, 1", sh, l)
	g.ins("shr.u32 %s, %s, %s", b, lo, sh)
	g.ins("and.b32 %s, %s, 1", b, b)
	g.ins("or.b32 %s, %s, %s", code, code, b)
	c := g.ldsh(cnt, l, 2)
	d := g.r32()
	g.ins("sub.u32 %s, %s, %s", d, code, first) // code ≥ first always
	g.branch("lt", d, c, found)
	g.ins("add.u32 %s, %s, %s", index, index, c)
	g.ins("add.u32 %s, %s, %s", first, first, c)
	g.ins("shl.b32 %s, %s, 1", first, first)
	g.ins("shl.b32 %s, %s, 1", code, code)
	g.ins("add.u32 %s, %s, 1", l, l)
	g.branch("le", l, "15", loop)
	g.ins("bra %s", g.errCorrupt)
	g.place(found)
	g.ins("add.u32 %s, %s, %s", index, index, d)
	s := g.ldsh(sym, index, 2)
	g.ins("mov.u32 %s, %s", out, s)
	g.ins("shr.u64 %s, %s, %s", g.bb, g.bb, l)
	g.ins("sub.u32 %s, %s, %s", g.bc, g.bc, l)
	g.place(done)
	return out
}

// build makes the decoding structures of the n (u32 register) code
// lengths at shared offset lens (plus lensAt, a u32 register or ""):
// counts, symbols sorted by code, and the lookup table of tbits bits. An
// over-subscribed code, or an incomplete one other than none or a single
// code of one bit (which zlib's, Go's and libdeflate's decoders all take),
// goes to the corrupt error.
func (g *infGen) build(lens int, lensAt, n string, tbits, tbl, cnt, sym int) {
	zero := g.imm32(0)
	for l := range 16 {
		g.stsh(cnt+2*l, "", 2, zero)
	}
	// lensBase is the u32 offset of the first length.
	base := g.imm32(lens)
	if lensAt != "" {
		g.ins("add.u32 %s, %s, %s", base, base, lensAt)
	}
	s := g.imm32(0)
	g.count(s, n, func() {
		li := g.r32()
		g.ins("add.u32 %s, %s, %s", li, base, s)
		l := g.ldsh(0, li, 1)
		c := g.ldsh(cnt, l, 2)
		g.ins("add.u32 %s, %s, 1", c, c)
		g.stsh(cnt, l, 2, c)
	})

	// Over-subscribed or incomplete?
	left, total := g.imm32(1), g.imm32(0)
	for l := 1; l <= 15; l++ {
		c := g.ldsh(cnt+2*l, "", 2)
		g.ins("shl.b32 %s, %s, 1", left, left)
		g.branch("gt", c, left, g.errCorrupt)
		g.ins("sub.u32 %s, %s, %s", left, left, c)
		g.ins("add.u32 %s, %s, %s", total, total, c)
	}
	complete := g.label()
	g.branch("eq", left, "0", complete)
	g.branch("eq", total, "0", complete)
	g.branch("ne", total, "1", g.errCorrupt)
	c1 := g.ldsh(cnt+2, "", 2)
	g.branch("ne", c1, "1", g.errCorrupt)
	g.place(complete)

	// Offsets of each length's first symbol, then the symbols sorted.
	off := g.imm32(0)
	for l := 1; l <= 15; l++ {
		g.stsh(infOFF+2*l, "", 2, off)
		c := g.ldsh(cnt+2*l, "", 2)
		g.ins("add.u32 %s, %s, %s", off, off, c)
	}
	g.ins("mov.u32 %s, 0", s)
	g.count(s, n, func() {
		next := g.label()
		li := g.r32()
		g.ins("add.u32 %s, %s, %s", li, base, s)
		l := g.ldsh(0, li, 1)
		g.branch("eq", l, "0", next)
		o := g.ldsh(infOFF, l, 2)
		g.stsh(sym, o, 2, s)
		g.ins("add.u32 %s, %s, 1", o, o)
		g.stsh(infOFF, l, 2, o)
		g.place(next)
	})

	// The table: cleared, then each code of at most tbits bits fills
	// every entry whose low bits are its bits (codes go LSB first).
	i := g.imm32(0)
	g.count(i, fmt.Sprint(1<<tbits), func() { g.stsh(tbl, i, 2, zero) })
	code, idx, ln := g.imm32(0), g.imm32(0), g.imm32(1)
	lenLoop, lenNext, symLoop, symDone := g.label(), g.label(), g.label(), g.label()
	g.place(lenLoop)
	g.branch("gt", ln, fmt.Sprint(tbits), symDone)
	cl := g.ldsh(cnt, ln, 2)
	k := g.imm32(0)
	g.place(symLoop)
	g.branch("ge", k, cl, lenNext)
	sv := g.ldsh(sym, idx, 2)
	e := g.r32()
	g.ins("shl.b32 %s, %s, 9", e, ln)
	g.ins("or.b32 %s, %s, %s", e, e, sv)
	rev := g.r32()
	g.ins("brev.b32 %s, %s", rev, code)
	sh := g.imm32(32)
	g.ins("sub.u32 %s, %s, %s", sh, sh, ln)
	g.ins("shr.u32 %s, %s, %s", rev, rev, sh)
	step := g.imm32(1)
	g.ins("shl.b32 %s, %s, %s", step, step, ln)
	fill, fillDone := g.label(), g.label()
	g.place(fill)
	g.branch("ge", rev, fmt.Sprint(1<<tbits), fillDone)
	g.stsh(tbl, rev, 2, e)
	g.ins("add.u32 %s, %s, %s", rev, rev, step)
	g.ins("bra %s", fill)
	g.place(fillDone)
	g.ins("add.u32 %s, %s, 1", code, code)
	g.ins("add.u32 %s, %s, 1", idx, idx)
	g.ins("add.u32 %s, %s, 1", k, k)
	g.ins("bra %s", symLoop)
	g.place(lenNext)
	g.ins("shl.b32 %s, %s, 1", code, code)
	g.ins("add.u32 %s, %s, 1", ln, ln)
	g.ins("bra %s", lenLoop)
	g.place(symDone)
}

// setLens stores v as the code lengths [lo, hi) at shared offset at.
func (g *infGen) setLens(at, lo, hi, v int) {
	r := g.imm32(v)
	i := g.imm32(lo)
	g.count(i, fmt.Sprint(hi), func() { g.stsh(at, i, 1, r) })
}

// copyMatch copies length bytes from dist back (both u32 registers; the
// caller checked dist ≤ o and o + length ≤ cap).
func (g *infGen) copyMatch(length, dist string) {
	dst := g.op
	d64 := g.r64()
	g.ins("cvt.u64.u32 %s, %s", d64, dist)
	src := g.r64()
	g.ins("sub.u64 %s, %s, %s", src, dst, d64)
	far, done := g.label(), g.label()
	g.branch("gt", dist, "4", far)
	// dist ≤ 4: the repeating pattern kept in a register, nothing loaded
	// after its first dist bytes.
	w := g.imm32(0)
	for k := range 4 {
		skip := g.label()
		g.branch("le", dist, fmt.Sprint(k), skip)
		b := g.r32()
		a := g.r64()
		g.ins("add.u64 %s, %s, %d", a, src, k)
		g.ins("ld.global.u8 %s, [%s]", b, a)
		g.ins("shl.b32 %s, %s, %d", b, b, 8*k)
		g.ins("or.b32 %s, %s, %s", w, w, b)
		g.place(skip)
	}
	sh := g.r32()
	g.ins("sub.u32 %s, %s, 1", sh, dist)
	g.ins("shl.b32 %s, %s, 3", sh, sh)
	k := g.imm32(0)
	loop := g.label()
	g.place(loop)
	g.branch("ge", k, length, done)
	b := g.r32()
	g.ins("and.b32 %s, %s, 255", b, w)
	a := g.r64()
	k64 := g.r64()
	g.ins("cvt.u64.u32 %s, %s", k64, k)
	g.ins("add.u64 %s, %s, %s", a, dst, k64)
	g.ins("st.global.u8 [%s], %s", a, b)
	g.ins("shr.u32 %s, %s, 8", w, w)
	g.ins("shl.b32 %s, %s, %s", b, b, sh)
	g.ins("or.b32 %s, %s, %s", w, w, b)
	g.ins("add.u32 %s, %s, 1", k, k)
	g.ins("bra %s", loop)

	// dist > 4: four bytes at a time (all already written), then the rest.
	g.place(far)
	k2 := g.imm32(0)
	quad, quadDone := g.label(), g.label()
	g.place(quad)
	k4 := g.r32()
	g.ins("add.u32 %s, %s, 4", k4, k2)
	g.branch("gt", k4, length, quadDone)
	k2_64 := g.r64()
	g.ins("cvt.u64.u32 %s, %s", k2_64, k2)
	sa, da := g.r64(), g.r64()
	g.ins("add.u64 %s, %s, %s", sa, src, k2_64)
	g.ins("add.u64 %s, %s, %s", da, dst, k2_64)
	var bs [4]string
	for j := range 4 {
		bs[j] = g.r32()
		a := g.r64()
		g.ins("add.u64 %s, %s, %d", a, sa, j)
		g.ins("ld.global.u8 %s, [%s]", bs[j], a)
	}
	for j := range 4 {
		a := g.r64()
		g.ins("add.u64 %s, %s, %d", a, da, j)
		g.ins("st.global.u8 [%s], %s", a, bs[j])
	}
	g.ins("mov.u32 %s, %s", k2, k4)
	g.ins("bra %s", quad)
	g.place(quadDone)
	g.copyBytes("ld.global.u8", src, dst, k2, length)
	g.place(done)
	g.ins("add.u32 %s, %s, %s", g.o, g.o, length)
	l64 := g.r64()
	g.ins("cvt.u64.u32 %s, %s", l64, length)
	g.ins("add.u64 %s, %s, %s", g.op, g.op, l64)
}

// copyBytes copies bytes k to n−1 (u32 registers; k is moved on) from
// src to dst (u64 registers), one at a time, loading with load.
func (g *infGen) copyBytes(load, src, dst, k, n string) {
	g.count(k, n, func() {
		k64 := g.r64()
		g.ins("cvt.u64.u32 %s, %s", k64, k)
		a, d := g.r64(), g.r64()
		g.ins("add.u64 %s, %s, %s", a, src, k64)
		g.ins("add.u64 %s, %s, %s", d, dst, k64)
		b := g.r32()
		g.ins("%s %s, [%s]", load, b, a)
		g.ins("st.global.u8 [%s], %s", d, b)
	})
}

// genInflate is the inflate kernel. Parameters: the streams (u8), their
// spans (2n u64 offsets into the streams; stream i is [spans[2i],
// spans[2i+1]), raw DEFLATE, with inflatePad bytes after the last), the
// output (u8, chunk i's slot at i·stride), stride (u64), each chunk's
// size and least decoded length (u32 arrays), the status (u32 a chunk)
// and n (u32). One thread a block, a block a chunk.
func genInflate(t ptxTarget) *kernelSpec {
	g := &infGen{ptxBuilder: &ptxBuilder{entry: inflateEntry, shared: infSize, block: 1}}
	in := g.param(".ptr")
	spans := g.param(".ptr")
	outAll := g.param(".ptr")
	stride := g.param(".u64")
	caps := g.param(".ptr")
	needs := g.param(".ptr")
	status := g.param(".ptr")
	n := g.param(".u32")
	g.sm = g.r64()
	g.ins("mov.u64 %s, %s", g.sm, g.smem())
	i := g.r32()
	g.ins("mov.u32 %s, %%ctaid.x", i)
	exit := g.label()
	g.branch("ge", i, n, exit)
	g.errCorrupt, g.errLong, g.errOverrun = g.label(), g.label(), g.label()
	errShort, finish := g.label(), g.label()
	st := g.r32() // the status to write

	// This chunk's stream, slot, size and least length.
	i8 := g.r64()
	g.ins("mul.wide.u32 %s, %s, 16", i8, i)
	sa := g.r64()
	g.ins("add.u64 %s, %s, %s", sa, spans, i8)
	s0, s1 := g.r64(), g.r64()
	g.ins("ld.global.nc.u64 %s, [%s]", s0, sa)
	g.ins("ld.global.nc.u64 %s, [%s+8]", s1, sa)
	g.start, g.end, g.pos, g.lim = g.r64(), g.r64(), g.r64(), g.r64()
	g.ins("add.u64 %s, %s, %s", g.start, in, s0)
	g.ins("add.u64 %s, %s, %s", g.end, in, s1)
	g.ins("mov.u64 %s, %s", g.pos, g.start)
	g.ins("add.u64 %s, %s, %d", g.lim, g.end, inflatePad-4) // the last 4-byte load starts here
	g.out = g.r64()
	so := g.r64()
	g.ins("cvt.u64.u32 %s, %s", so, i)
	g.ins("mul.lo.u64 %s, %s, %s", so, so, stride)
	g.ins("add.u64 %s, %s, %s", g.out, outAll, so)
	i4 := g.r64()
	g.ins("mul.wide.u32 %s, %s, 4", i4, i)
	ca, na := g.r64(), g.r64()
	g.ins("add.u64 %s, %s, %s", ca, caps, i4)
	g.ins("add.u64 %s, %s, %s", na, needs, i4)
	g.cap = g.r32()
	need := g.r32()
	g.ins("ld.global.nc.u32 %s, [%s]", g.cap, ca)
	g.ins("ld.global.nc.u32 %s, [%s]", need, na)
	g.bb, g.bc, g.o = g.r64(), g.r32(), g.r32()
	g.ins("mov.u64 %s, 0", g.bb)
	g.ins("mov.u32 %s, 0", g.bc)
	g.ins("mov.u32 %s, 0", g.o)
	g.op = g.r64()
	g.ins("mov.u64 %s, %s", g.op, g.out)
	g.align()

	block, stored, fixed, dyn, codes, blockEnd := g.label(), g.label(), g.label(), g.label(), g.label(), g.label()
	g.place(block)
	g.refill()
	final := g.bits("1")
	typ := g.bits("2")
	g.branch("eq", typ, "0", stored)
	g.branch("eq", typ, "1", fixed)
	g.branch("eq", typ, "2", dyn)
	g.ins("bra %s", g.errCorrupt)

	// A stored block: to the byte, LEN and NLEN, then LEN bytes as they are.
	g.place(stored)
	{
		drop := g.r32()
		g.ins("and.b32 %s, %s, 7", drop, g.bc)
		g.ins("shr.u64 %s, %s, %s", g.bb, g.bb, drop)
		g.ins("sub.u32 %s, %s, %s", g.bc, g.bc, drop)
		g.refill()
		ln := g.bits("16")
		nl := g.bits("16")
		g.ins("xor.b32 %s, %s, 65535", nl, nl)
		g.branch("ne", ln, nl, g.errCorrupt)
		// The buffer's whole bytes go back: the block's bytes start there.
		back := g.r32()
		g.ins("shr.u32 %s, %s, 3", back, g.bc)
		b64 := g.r64()
		g.ins("cvt.u64.u32 %s, %s", b64, back)
		src := g.r64()
		g.ins("sub.u64 %s, %s, %s", src, g.pos, b64)
		g.ins("mov.u64 %s, 0", g.bb)
		g.ins("mov.u32 %s, 0", g.bc)
		l64 := g.r64()
		g.ins("cvt.u64.u32 %s, %s", l64, ln)
		g.ins("add.u64 %s, %s, %s", g.pos, src, l64)
		p := g.p()
		g.ins("setp.gt.u64 %s, %s, %s", p, g.pos, g.end)
		g.ins("@%s bra %s", p, g.errOverrun)
		room := g.r32()
		g.ins("sub.u32 %s, %s, %s", room, g.cap, g.o)
		g.branch("gt", ln, room, g.errLong)
		g.copyBytes("ld.global.nc.u8", src, g.op, g.imm32(0), ln)
		g.ins("add.u32 %s, %s, %s", g.o, g.o, ln)
		g.ins("add.u64 %s, %s, %s", g.op, g.op, l64)
		g.align()
		g.ins("bra %s", blockEnd)
	}

	// The fixed codes (RFC 1951 3.2.6).
	g.place(fixed)
	{
		g.setLens(infLENS, 0, 144, 8)
		g.setLens(infLENS, 144, 256, 9)
		g.setLens(infLENS, 256, 280, 7)
		g.setLens(infLENS, 280, 288, 8)
		g.setLens(infLENS, 288, 320, 5)
		n288, n32, at288 := g.imm32(288), g.imm32(32), g.imm32(288)
		g.build(infLENS, "", n288, infLitBits, infLT, infLC, infLS)
		g.build(infLENS, at288, n32, infDistBits, infDT, infDC, infDS)
		g.ins("bra %s", codes)
	}

	// Dynamic codes: the code-length code, the lengths, the two codes.
	g.place(dyn)
	{
		g.refill()
		hlit := g.bits("5")
		g.ins("add.u32 %s, %s, 257", hlit, hlit)
		hdist := g.bits("5")
		g.ins("add.u32 %s, %s, 1", hdist, hdist)
		hclen := g.bits("4")
		g.ins("add.u32 %s, %s, 4", hclen, hclen)
		g.branch("gt", hlit, "286", g.errCorrupt)
		g.branch("gt", hdist, "30", g.errCorrupt)
		zero := g.imm32(0)
		for k, sym := range infOrder {
			g.refill()
			v := g.r32()
			have, set := g.label(), g.label()
			g.branch("gt", hclen, fmt.Sprint(k), have)
			g.ins("mov.u32 %s, %s", v, zero)
			g.ins("bra %s", set)
			g.place(have)
			x := g.bits("3")
			g.ins("mov.u32 %s, %s", v, x)
			g.place(set)
			g.stsh(infCLL+sym, "", 1, v)
		}
		n19 := g.imm32(19)
		g.build(infCLL, "", n19, infCLBits, infCT, infCC, infCS)
		total := g.r32()
		g.ins("add.u32 %s, %s, %s", total, hlit, hdist)
		i := g.imm32(0)
		loop, done, lit, rep := g.label(), g.label(), g.label(), g.label()
		g.place(loop)
		g.branch("ge", i, total, done)
		g.refill()
		sym := g.decode(infCT, infCLBits, infCC, infCS)
		g.branch("lt", sym, "16", lit)
		prev, count := g.r32(), g.r32()
		is16, is17 := g.label(), g.label()
		g.branch("eq", sym, "16", is16)
		g.branch("eq", sym, "17", is17)
		x7 := g.bits("7")
		g.ins("add.u32 %s, %s, 11", count, x7)
		g.ins("mov.u32 %s, 0", prev)
		g.ins("bra %s", rep)
		g.place(is17)
		x3 := g.bits("3")
		g.ins("add.u32 %s, %s, 3", count, x3)
		g.ins("mov.u32 %s, 0", prev)
		g.ins("bra %s", rep)
		g.place(is16)
		g.branch("eq", i, "0", g.errCorrupt)
		x2 := g.bits("2")
		g.ins("add.u32 %s, %s, 3", count, x2)
		im1 := g.r32()
		g.ins("sub.u32 %s, %s, 1", im1, i)
		pv := g.ldsh(infLENS, im1, 1)
		g.ins("mov.u32 %s, %s", prev, pv)
		g.place(rep)
		end := g.r32()
		g.ins("add.u32 %s, %s, %s", end, i, count)
		g.branch("gt", end, total, g.errCorrupt)
		rl, rd := g.label(), g.label()
		g.place(rl)
		g.branch("ge", i, end, rd)
		g.stsh(infLENS, i, 1, prev)
		g.ins("add.u32 %s, %s, 1", i, i)
		g.ins("bra %s", rl)
		g.place(rd)
		g.ins("bra %s", loop)
		g.place(lit)
		g.stsh(infLENS, i, 1, sym)
		g.ins("add.u32 %s, %s, 1", i, i)
		g.ins("bra %s", loop)
		g.place(done)
		eob := g.ldsh(infLENS+256, "", 1)
		g.branch("eq", eob, "0", g.errCorrupt)
		g.build(infLENS, "", hlit, infLitBits, infLT, infLC, infLS)
		g.build(infLENS, hlit, hdist, infDistBits, infDT, infDC, infDS)
	}

	// The block's symbols.
	g.place(codes)
	{
		sym, isLen := g.label(), g.label()
		g.place(sym)
		g.refill()
		s := g.decode(infLT, infLitBits, infLC, infLS)
		g.branch("ge", s, "256", isLen)
		g.branch("ge", g.o, g.cap, g.errLong)
		g.ins("st.global.u8 [%s], %s", g.op, s)
		g.ins("add.u64 %s, %s, 1", g.op, g.op)
		g.ins("add.u32 %s, %s, 1", g.o, g.o)
		g.ins("bra %s", sym)
		g.place(isLen)
		g.branch("eq", s, "256", blockEnd)
		g.branch("gt", s, "285", g.errCorrupt)
		// Length: symbol 257+v, v < 8: 3+v; v = 28: 258; else
		// ((4 + v&3) << (v>>2 − 1)) + 3 plus v>>2 − 1 extra bits.
		v := g.r32()
		g.ins("sub.u32 %s, %s, 257", v, s)
		ext, base := g.r32(), g.r32()
		g.ins("shr.u32 %s, %s, 2", ext, v)
		g.ins("sub.u32 %s, %s, 1", ext, ext)
		g.ins("and.b32 %s, %s, 3", base, v)
		g.ins("add.u32 %s, %s, 4", base, base)
		g.ins("shl.b32 %s, %s, %s", base, base, ext)
		g.ins("add.u32 %s, %s, 3", base, base)
		small, is258 := g.p(), g.p()
		g.ins("setp.lt.u32 %s, %s, 8", small, v)
		g.ins("setp.eq.u32 %s, %s, 28", is258, v)
		vp3 := g.r32()
		g.ins("add.u32 %s, %s, 3", vp3, v)
		g.ins("selp.b32 %s, %s, %s, %s", base, vp3, base, small)
		g.ins("selp.b32 %s, 258, %s, %s", base, base, is258)
		g.ins("selp.b32 %s, 0, %s, %s", ext, ext, small)
		g.ins("selp.b32 %s, 0, %s, %s", ext, ext, is258)
		xl := g.bits(ext)
		length := g.r32()
		g.ins("add.u32 %s, %s, %s", length, base, xl)
		g.refill()
		ds := g.decode(infDT, infDistBits, infDC, infDS)
		g.branch("ge", ds, "30", g.errCorrupt)
		// Distance: symbol d < 4: d+1; else ((2 + d&1) << (d>>1 − 1)) + 1
		// plus d>>1 − 1 extra bits.
		dext, dbase := g.r32(), g.r32()
		g.ins("shr.u32 %s, %s, 1", dext, ds)
		g.ins("sub.u32 %s, %s, 1", dext, dext)
		g.ins("and.b32 %s, %s, 1", dbase, ds)
		g.ins("add.u32 %s, %s, 2", dbase, dbase)
		g.ins("shl.b32 %s, %s, %s", dbase, dbase, dext)
		g.ins("add.u32 %s, %s, 1", dbase, dbase)
		dsmall := g.p()
		g.ins("setp.lt.u32 %s, %s, 4", dsmall, ds)
		dp1 := g.r32()
		g.ins("add.u32 %s, %s, 1", dp1, ds)
		g.ins("selp.b32 %s, %s, %s, %s", dbase, dp1, dbase, dsmall)
		g.ins("selp.b32 %s, 0, %s, %s", dext, dext, dsmall)
		xd := g.bits(dext)
		dist := g.r32()
		g.ins("add.u32 %s, %s, %s", dist, dbase, xd)
		g.branch("gt", dist, g.o, g.errCorrupt)
		room := g.r32()
		g.ins("sub.u32 %s, %s, %s", room, g.cap, g.o)
		g.branch("gt", length, room, g.errLong)
		g.copyMatch(length, dist)
		g.ins("bra %s", sym)
	}

	g.place(blockEnd)
	g.branch("eq", final, "0", block)
	// The stream's end: no bit past its last byte used, at least need
	// bytes decoded.
	{
		used := g.r64()
		g.ins("sub.u64 %s, %s, %s", used, g.pos, g.start)
		g.ins("shl.b64 %s, %s, 3", used, used)
		bc64 := g.r64()
		g.ins("cvt.u64.u32 %s, %s", bc64, g.bc)
		g.ins("sub.u64 %s, %s, %s", used, used, bc64)
		have := g.r64()
		g.ins("sub.u64 %s, %s, %s", have, g.end, g.start)
		g.ins("shl.b64 %s, %s, 3", have, have)
		p := g.p()
		g.ins("setp.gt.u64 %s, %s, %s", p, used, have)
		g.ins("@%s bra %s", p, g.errOverrun)
		g.branch("lt", g.o, need, errShort)
		g.ins("mov.u32 %s, %d", st, inflateOK)
		g.ins("bra %s", finish)
	}
	for _, e := range []struct {
		l    string
		code int
	}{{g.errCorrupt, inflateCorrupt}, {g.errLong, inflateLong}, {errShort, inflateShort}, {g.errOverrun, inflateOverrun}} {
		g.place(e.l)
		g.ins("mov.u32 %s, %d", st, e.code)
		g.ins("bra %s", finish)
	}
	g.place(finish)
	sp := g.r64()
	g.ins("add.u64 %s, %s, %s", sp, status, i4)
	g.ins("st.global.u32 [%s], %s", sp, st)
	g.place(exit)
	g.ins("ret")
	return &kernelSpec{PTX: g.finish(t, "inflate DEFLATE chunks, one thread a chunk"), Target: t, Entry: inflateEntry, Block: 1}
}

// placeShape is what the placement kernel's code depends on.
type placeShape struct {
	Size      int  // bytes a sample: 1, 2 or 4
	Predictor bool // horizontal differencing (TIFF predictor 2) to undo
}

// genPlace is the placement kernel: one thread a chunk row, which undoes
// the predictor along the row (a running sum, wrapping at the sample's
// width) and stores the samples the image shows into the plane.
// Parameters: the decoded chunks (chunk c's slot at c·stride), stride
// (u64), the plane, the plane's width and height, the chunk's width and
// height, chunks across, and the number of chunk rows (all u32).
func genPlace(sh placeShape, t ptxTarget) *kernelSpec {
	b := &ptxBuilder{entry: placeEntry}
	raw := b.param(".ptr")
	stride := b.param(".u64")
	plane := b.param(".ptr")
	w := b.param(".u32")
	h := b.param(".u32")
	cw := b.param(".u32")
	ch := b.param(".u32")
	across := b.param(".u32")
	rows := b.param(".u32")
	gid, _, _ := b.threadIndex()
	exit := b.label()
	p := b.reg(rP)
	n64 := b.reg(rRD)
	b.ins("cvt.u64.u32 %s, %s", n64, rows)
	b.ins("setp.ge.u64 %s, %s, %s", p, gid, n64)
	b.ins("@%s bra %s", p, exit)
	t32 := b.reg(rR)
	b.ins("cvt.u32.u64 %s, %s", t32, gid)
	c, r := b.reg(rR), b.reg(rR)
	b.ins("div.u32 %s, %s, %s", c, t32, ch)
	b.ins("mul.lo.u32 %s, %s, %s", r, c, ch)
	b.ins("sub.u32 %s, %s, %s", r, t32, r)
	cx, cy := b.reg(rR), b.reg(rR)
	b.ins("div.u32 %s, %s, %s", cy, c, across)
	b.ins("mul.lo.u32 %s, %s, %s", cx, cy, across)
	b.ins("sub.u32 %s, %s, %s", cx, c, cx)
	x0, y := b.reg(rR), b.reg(rR)
	b.ins("mul.lo.u32 %s, %s, %s", x0, cx, cw)
	b.ins("mul.lo.u32 %s, %s, %s", y, cy, ch)
	b.ins("add.u32 %s, %s, %s", y, y, r)
	b.ins("setp.ge.u32 %s, %s, %s", p, y, h)
	b.ins("@%s bra %s", p, exit)
	vw := b.reg(rR)
	b.ins("sub.u32 %s, %s, %s", vw, w, x0)
	b.ins("min.u32 %s, %s, %s", vw, vw, cw)
	// The row's first sample in the chunk and in the plane.
	src := b.reg(rRD)
	b.ins("cvt.u64.u32 %s, %s", src, c)
	b.ins("mul.lo.u64 %s, %s, %s", src, src, stride)
	rowOff := b.reg(rRD)
	b.ins("mul.wide.u32 %s, %s, %s", rowOff, r, cw)
	b.ins("mul.lo.u64 %s, %s, %d", rowOff, rowOff, sh.Size)
	b.ins("add.u64 %s, %s, %s", src, src, rowOff)
	b.ins("add.u64 %s, %s, %s", src, src, raw)
	dst := b.reg(rRD)
	b.ins("mul.wide.u32 %s, %s, %s", dst, y, w)
	x064 := b.reg(rRD)
	b.ins("cvt.u64.u32 %s, %s", x064, x0)
	b.ins("add.u64 %s, %s, %s", dst, dst, x064)
	b.ins("mul.lo.u64 %s, %s, %d", dst, dst, sh.Size)
	b.ins("add.u64 %s, %s, %s", dst, dst, plane)
	acc, x := b.reg(rR), b.reg(rR)
	b.ins("mov.u32 %s, 0", acc)
	b.ins("mov.u32 %s, 0", x)
	loop := b.label()
	b.place(loop)
	b.ins("setp.ge.u32 %s, %s, %s", p, x, vw)
	b.ins("@%s bra %s", p, exit)
	v := b.reg(rR)
	b.ins("ld.global.nc.u%d %s, [%s]", 8*sh.Size, v, src)
	if sh.Predictor {
		b.ins("add.u32 %s, %s, %s", acc, acc, v)
		b.ins("mov.u32 %s, %s", v, acc)
	}
	b.ins("st.global.u%d [%s], %s", 8*sh.Size, dst, v)
	b.ins("add.u64 %s, %s, %d", src, src, sh.Size)
	b.ins("add.u64 %s, %s, %d", dst, dst, sh.Size)
	b.ins("add.u32 %s, %s, 1", x, x)
	b.ins("bra %s", loop)
	b.place(exit)
	b.ins("ret")
	about := fmt.Sprintf("place decoded chunks, %d-byte samples, predictor %v", sh.Size, sh.Predictor)
	return &kernelSpec{PTX: b.finish(t, about), Target: t, Entry: placeEntry}
}

// placeSize is the sample size the placement kernel moves for t (0: none).
func placeSize(t compute.DataType) int {
	switch s := t.Size(); s {
	case 1, 2, 4:
		return s
	}
	return 0
}
