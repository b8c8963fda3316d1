package cudaback

import (
	"fmt"

	"canopy/compute"
)

// The warp kernel (compute/warp's gather on the GPU), generated as PTX
// like the other kernels: one thread a destination pixel, which finds its
// segment of the plan (a binary search over its row's segments, as the
// host computed them with the approximate transformer), computes its
// source position, reads the source band as stored, resamples it and
// stores the result in the band's type. Every operation is the Go
// reference's (compute/warp's kernel.go), in float64, each rounded on its
// own (.rn: never contracted into a fused multiply-add), in the same
// order, so that the result is the reference's bit for bit. The kernel is
// specialised by the sample type, the resampling, the 4-tap formulas, the
// mask and the nodata tests; sizes, scales, nodata values and pointers
// are parameters.

// warpEntry is the warp kernel's entry point.
const warpEntry = "canopy_warp"

// warpShape is what the warp kernel's code depends on.
type warpShape struct {
	Type       compute.DataType
	Resampling int // compute/warp.Resampling: 0 nearest, 1 bilinear, 2 cubic, 3 average
	Use4       bool
	Mask       bool
	NoData     bool // the source has a nodata value
	DstNoData  bool // an integer result equal to the target's nodata moves off it
}

// warpSegBytes is the size of one compute/warp.Segment: start, n, k0
// (int32), padding, then sx, sy, dx, dy (float64).
const warpSegBytes = 48

// warpGen writes the warp kernel.
type warpGen struct {
	*ptxBuilder
	sh warpShape
	// parameters, loaded at the start
	src, mask, dst, filled, segs, rows, far, farRows string // %rd
	w, h, dw, first, count, xrad, yrad               string // %r
	fw, fh, nd, dnd, xs, ys                          string // %fd
}

// f applies a float64 operation ("add", "sub", "mul", "div", "min",
// "max") to a and b into a new register.
func (g *warpGen) f(op, a, b string) string {
	r := g.reg(rFD)
	g.fto(r, op, a, b)
	return r
}

// fto applies a float64 operation into register d (an immediate first
// operand is moved into a register first).
func (g *warpGen) fto(d, op, a, b string) {
	if a[0] == '0' && len(a) == 18 {
		r := g.reg(rFD)
		g.ins("mov.f64 %s, %s", r, a)
		a = r
	}
	switch op {
	case "min", "max":
		g.ins("%s.f64 %s, %s, %s", op, d, a, b)
	default:
		g.ins("%s.rn.f64 %s, %s, %s", op, d, a, b)
	}
}

// imm is a float64 immediate.
func imm(v float64) string { return f64imm(v) }

// i applies a 32-bit integer operation (two's complement: add, sub,
// mul.lo) into a new register.
func (g *warpGen) i(op, a, b string) string {
	if a[0] != '%' {
		r := g.reg(rR)
		g.ins("mov.u32 %s, %s", r, a)
		a = r
	}
	r := g.reg(rR)
	g.ins("%s.u32 %s, %s, %s", op, r, a, b)
	return r
}

// toF converts the signed integer a to float64.
func (g *warpGen) toF(a string) string {
	r := g.reg(rFD)
	g.ins("cvt.rn.f64.s32 %s, %s", r, a)
	return r
}

// pred sets a new predicate with setp.cmp.typ.
func (g *warpGen) pred(cmp, typ, a, b string) string {
	p := g.reg(rP)
	g.ins("setp.%s.%s %s, %s, %s", cmp, typ, p, a, b)
	return p
}

func (g *warpGen) or(a, b string) string {
	p := g.reg(rP)
	g.ins("or.pred %s, %s, %s", p, a, b)
	return p
}

func (g *warpGen) and(a, b string) string {
	p := g.reg(rP)
	g.ins("and.pred %s, %s, %s", p, a, b)
	return p
}

// sel is p ? a : b, float64.
func (g *warpGen) sel(p, a, b string) string {
	r := g.reg(rFD)
	g.ins("selp.f64 %s, %s, %s, %s", r, a, b, p)
	return r
}

// seli is p ? a : b, 32-bit.
func (g *warpGen) seli(p, a, b string) string {
	r := g.reg(rR)
	g.ins("selp.b32 %s, %s, %s, %s", r, a, b, p)
	return r
}

// addr is base + idx*size (idx a non-negative 32-bit index).
func (g *warpGen) addr(base, idx string, size int) string {
	o := g.reg(rRD)
	g.ins("mul.wide.u32 %s, %s, %d", o, idx, size)
	a := g.reg(rRD)
	g.ins("add.u64 %s, %s, %s", a, base, o)
	return a
}

// elem is the sample type's PTX load type and size.
func (g *warpGen) elem() (string, int) {
	switch g.sh.Type {
	case compute.U8:
		return "u8", 1
	case compute.U16:
		return "u16", 2
	case compute.I16:
		return "s16", 2
	case compute.U32:
		return "u32", 4
	case compute.I32:
		return "s32", 4
	}
	return "f32", 4
}

// sample loads source pixel idx as float64 and sets bad when it holds no
// data (masked, NaN, or the nodata value): kernel.go's valid.
func (g *warpGen) sample(idx string) (v, bad string) {
	typ, size := g.elem()
	a := g.addr(g.src, idx, size)
	v = g.reg(rFD)
	if typ == "f32" {
		x := g.reg(rF)
		g.ins("ld.global.nc.f32 %s, [%s]", x, a)
		g.ins("cvt.f64.f32 %s, %s", v, x)
	} else {
		x := g.reg(rR)
		g.ins("ld.global.nc.%s %s, [%s]", typ, x, a)
		if typ[0] == 's' {
			g.ins("cvt.rn.f64.s32 %s, %s", v, x)
		} else {
			g.ins("cvt.rn.f64.u32 %s, %s", v, x)
		}
	}
	bad = ""
	add := func(p string) {
		if bad == "" {
			bad = p
		} else {
			bad = g.or(bad, p)
		}
	}
	if g.sh.Mask {
		m := g.reg(rR)
		g.ins("ld.global.nc.u8 %s, [%s]", m, g.addr(g.mask, idx, 1))
		add(g.pred("ne", "u32", m, "0"))
	}
	if typ == "f32" {
		add(g.pred("nan", "f64", v, v))
	}
	if g.sh.NoData {
		add(g.pred("eq", "f64", v, g.nd))
	}
	if bad == "" {
		bad = g.pred("ne", "u32", idx, idx) // always false
	}
	return v, bad
}

// segment loads segment k of list base: start, n, k0 and the four
// float64s.
func (g *warpGen) segment(base, k string) (start, n, k0, sx, sy, dx, dy string) {
	a := g.addr(base, k, warpSegBytes)
	start, n, k0 = g.reg(rR), g.reg(rR), g.reg(rR)
	g.ins("ld.global.nc.s32 %s, [%s]", start, a)
	g.ins("ld.global.nc.s32 %s, [%s+4]", n, a)
	g.ins("ld.global.nc.s32 %s, [%s+8]", k0, a)
	sx, sy, dx, dy = g.reg(rFD), g.reg(rFD), g.reg(rFD), g.reg(rFD)
	g.ins("ld.global.nc.f64 %s, [%s+16]", sx, a)
	g.ins("ld.global.nc.f64 %s, [%s+24]", sy, a)
	g.ins("ld.global.nc.f64 %s, [%s+32]", dx, a)
	g.ins("ld.global.nc.f64 %s, [%s+40]", dy, a)
	return
}

// find returns the index of the first segment of row r in list (rows
// start) that ends after x, and the index past the row's last segment:
// a binary search (the segments of a row are in order).
func (g *warpGen) find(list, rows, r, x string) (k, end string) {
	lo, hi := g.reg(rR), g.reg(rR)
	g.ins("ld.global.nc.s32 %s, [%s]", lo, g.addr(rows, r, 4))
	r1 := g.i("add", r, "1")
	g.ins("ld.global.nc.s32 %s, [%s]", hi, g.addr(rows, r1, 4))
	end = g.reg(rR)
	g.ins("mov.u32 %s, %s", end, hi)
	loop, done := g.label(), g.label()
	g.place(loop)
	p := g.pred("ge", "u32", lo, hi)
	g.ins("@%s bra %s", p, done)
	m := g.i("add", lo, hi)
	g.ins("shr.u32 %s, %s, 1", m, m)
	a := g.addr(list, m, warpSegBytes)
	s, n := g.reg(rR), g.reg(rR)
	g.ins("ld.global.nc.s32 %s, [%s]", s, a)
	g.ins("ld.global.nc.s32 %s, [%s+4]", n, a)
	e := g.i("add", s, n)
	before := g.pred("ge", "u32", x, e) // the segment ends at or before x
	m1 := g.i("add", m, "1")
	lo2 := g.seli(before, m1, lo)
	hi2 := g.seli(before, hi, m)
	g.ins("mov.u32 %s, %s", lo, lo2)
	g.ins("mov.u32 %s, %s", hi, hi2)
	g.ins("bra %s", loop)
	g.place(done)
	return lo, end
}

// pos is the segment's position of pixel k0 + j: sx + dx·fk, sy + dy·fk.
func (g *warpGen) pos(k0, j, sx, sy, dx, dy string) (x, y string) {
	fk := g.toF(g.i("add", k0, j))
	return g.f("add", sx, g.f("mul", dx, fk)), g.f("add", sy, g.f("mul", dy, fk))
}

// genWarp generates the warp kernel of shape sh.
func genWarp(sh warpShape, t ptxTarget) *kernelSpec {
	g := &warpGen{ptxBuilder: &ptxBuilder{entry: warpEntry}, sh: sh}
	g.src, g.mask, g.dst, g.filled = g.param(".ptr"), g.param(".ptr"), g.param(".ptr"), g.param(".ptr")
	g.segs, g.rows, g.far, g.farRows = g.param(".ptr"), g.param(".ptr"), g.param(".ptr"), g.param(".ptr")
	g.w, g.h, g.dw, g.first, g.count = g.param(".u32"), g.param(".u32"), g.param(".u32"), g.param(".u32"), g.param(".u32")
	g.xrad, g.yrad = g.param(".u32"), g.param(".u32")
	g.nd, g.dnd, g.xs, g.ys = g.param(".f64"), g.param(".f64"), g.param(".f64"), g.param(".f64")
	g.fw, g.fh = g.reg(rFD), g.reg(rFD)
	g.ins("cvt.rn.f64.u32 %s, %s", g.fw, g.w)
	g.ins("cvt.rn.f64.u32 %s, %s", g.fh, g.h)

	exit := g.label()
	tid := g.reg(rR)
	c, n, t0 := g.reg(rR), g.reg(rR), g.reg(rR)
	g.ins("mov.u32 %s, %%ctaid.x", c)
	g.ins("mov.u32 %s, %%ntid.x", n)
	g.ins("mov.u32 %s, %%tid.x", t0)
	g.ins("mul.lo.u32 %s, %s, %s", tid, c, n)
	g.ins("add.u32 %s, %s, %s", tid, tid, t0)
	g.ins("@%s bra %s", g.pred("ge", "u32", tid, g.count), exit)
	idx := g.i("add", g.first, tid)
	r := g.reg(rR)
	g.ins("div.u32 %s, %s, %s", r, idx, g.dw)
	x := g.i("sub", idx, g.i("mul.lo", r, g.dw))
	fl := g.reg(rR)
	g.ins("ld.global.u8 %s, [%s]", fl, g.addr(g.filled, idx, 1))
	g.ins("@%s bra %s", g.pred("ne", "u32", fl, "0"), exit)

	res := g.reg(rFD)
	store := g.label()
	if sh.Resampling == 3 {
		// Average: the pixel's top-left corner from the first segment
		// ending after x, its bottom-right from Far's (kernel.go's
		// averageRow; a segment that starts after x extrapolates).
		k, end := g.find(g.segs, g.rows, r, x)
		g.ins("@%s bra %s", g.pred("ge", "u32", k, end), exit)
		s0, _, k0, sx, sy, dx, dy := g.segment(g.segs, k)
		x0, y0 := g.pos(k0, g.i("sub", x, s0), sx, sy, dx, dy)
		fk, fend := g.find(g.far, g.farRows, r, x)
		g.ins("@%s bra %s", g.pred("ge", "u32", fk, fend), exit)
		s1, _, k1, fx, fy, fdx, fdy := g.segment(g.far, fk)
		x1, y1 := g.pos(k1, g.i("sub", x, s1), fx, fy, fdx, fdy)
		g.average(x0, y0, x1, y1, res, store, exit)
	} else {
		k, end := g.find(g.segs, g.rows, r, x)
		g.ins("@%s bra %s", g.pred("ge", "u32", k, end), exit)
		s0, _, k0, sx0, sy0, dx, dy := g.segment(g.segs, k)
		g.ins("@%s bra %s", g.pred("lt", "u32", x, s0), exit)
		sx, sy := g.pos(k0, g.i("sub", x, s0), sx0, sy0, dx, dy)
		g.at(sx, sy, res, store, exit)
	}
	g.place(store)
	g.store(idx, res)
	g.place(exit)
	g.ins("ret")
	return &kernelSpec{PTX: g.finish(t, fmt.Sprintf("the warp kernel (%s, resampling %d, 4-tap %v, mask %v, nodata %v/%v)",
		sh.Type, sh.Resampling, sh.Use4, sh.Mask, sh.NoData, sh.DstNoData)), Target: t, Entry: warpEntry}
}

// at is kernel.go's at: the sample at (sx, sy) into res, then a branch to
// store, or to exit when there is none.
func (g *warpGen) at(sx, sy, res, store, exit string) {
	// NaN, left of or above the source, or past its right or bottom edge
	// (with 1e-10 slack) is outside.
	out := g.or(g.pred("nan", "f64", sx, sy), g.or(g.pred("lt", "f64", sx, imm(0)), g.pred("lt", "f64", sy, imm(0))))
	ex, ey := g.f("add", sx, imm(1e-10)), g.f("add", sy, imm(1e-10))
	out = g.or(out, g.or(g.pred("gt", "f64", ex, g.fw), g.pred("gt", "f64", ey, g.fh)))
	g.ins("@%s bra %s", out, exit)
	ix, iy := g.reg(rR), g.reg(rR)
	g.ins("cvt.rzi.s32.f64 %s, %s", ix, ex)
	g.ins("cvt.rzi.s32.f64 %s, %s", iy, ey)
	ix = g.seli(g.pred("eq", "u32", ix, g.w), g.i("sub", ix, "1"), ix)
	iy = g.seli(g.pred("eq", "u32", iy, g.h), g.i("sub", iy, "1"), iy)
	i := g.i("add", g.i("mul.lo", iy, g.w), ix)
	v, bad := g.sample(i)
	g.ins("@%s bra %s", bad, exit)
	switch {
	case g.sh.Resampling == 0:
		g.ins("mov.f64 %s, %s", res, v)
		g.ins("bra %s", store)
	case g.sh.Use4 && g.sh.Resampling == 1:
		g.bilinear4(sx, sy, res, store, exit)
	case g.sh.Use4:
		bil := g.label()
		g.cubic4(sx, sy, res, store, bil)
		g.place(bil)
		g.bilinear4(sx, sy, res, store, exit)
	default:
		g.general(sx, sy, res, store, exit)
	}
}

// tap adds source pixel (x, y) with weight m to acc and div when it is
// inside the source and valid (kernel.go's bilinear4's add).
func (g *warpGen) tap(x, y, m, acc, div string) {
	skip := g.label()
	out := g.or(g.pred("ge", "u32", x, g.w), g.pred("ge", "u32", y, g.h))
	g.ins("@%s bra %s", out, skip)
	v, bad := g.sample(g.i("add", g.i("mul.lo", y, g.w), x))
	g.ins("@%s bra %s", bad, skip)
	g.fto(div, "add", div, m)
	g.fto(acc, "add", acc, g.f("mul", v, m))
	g.place(skip)
}

// floorInt is int(math.Floor(a)).
func (g *warpGen) floorInt(a string) string {
	r := g.reg(rR)
	g.ins("cvt.rmi.s32.f64 %s, %s", r, a)
	return r
}

// truncInt is int(a).
func (g *warpGen) truncInt(a string) string {
	r := g.reg(rR)
	g.ins("cvt.rzi.s32.f64 %s, %s", r, a)
	return r
}

// bilinear4 is kernel.go's bilinear4.
func (g *warpGen) bilinear4(sx, sy, res, store, exit string) {
	ix := g.floorInt(g.f("sub", sx, imm(0.5)))
	iy := g.floorInt(g.f("sub", sy, imm(0.5)))
	rx := g.f("sub", imm(1.5), g.f("sub", sx, g.toF(ix)))
	ry := g.f("sub", imm(1.5), g.f("sub", sy, g.toF(iy)))
	px := g.pred("eq", "s32", ix, "-1")
	py := g.pred("eq", "s32", iy, "-1")
	ix = g.seli(px, "0", ix)
	rx = g.sel(px, imm(1), rx)
	iy = g.seli(py, "0", iy)
	ry = g.sel(py, imm(1), ry)
	acc, div := g.reg(rFD), g.reg(rFD)
	g.ins("mov.f64 %s, %s", acc, imm(0))
	g.ins("mov.f64 %s, %s", div, imm(0))
	qx, qy := g.f("sub", imm(1), rx), g.f("sub", imm(1), ry)
	ix1, iy1 := g.i("add", ix, "1"), g.i("add", iy, "1")
	g.tap(ix, iy, g.f("mul", rx, ry), acc, div)
	g.tap(ix1, iy, g.f("mul", qx, ry), acc, div)
	g.tap(ix, iy1, g.f("mul", rx, qy), acc, div)
	g.tap(ix1, iy1, g.f("mul", qx, qy), acc, div)
	g.ins("mov.f64 %s, %s", res, acc)
	g.ins("@%s bra %s", g.pred("eq", "f64", div, imm(1)), store)
	g.ins("@%s bra %s", g.pred("lt", "f64", div, imm(0.00001)), exit)
	g.fto(res, "div", acc, div)
	g.ins("bra %s", store)
}

// cubicWeights is kernel.go's cubicWeights.
func (g *warpGen) cubicWeights(x string) [4]string {
	halfX := g.f("mul", imm(0.5), x)
	threeX := g.f("mul", imm(3), x)
	halfX2 := g.f("mul", halfX, x)
	return [4]string{
		g.f("mul", halfX, g.f("add", imm(-1), g.f("mul", x, g.f("sub", imm(2), x)))),
		g.f("add", imm(1), g.f("mul", halfX2, g.f("add", imm(-5), threeX))),
		g.f("mul", halfX, g.f("add", imm(1), g.f("mul", x, g.f("sub", imm(4), threeX)))),
		g.f("mul", halfX2, g.f("add", imm(-1), x)),
	}
}

// convol4 is ((a0·b0 + a1·b1) + a2·b2) + a3·b3.
func (g *warpGen) convol4(a, b [4]string) string {
	s := g.f("add", g.f("mul", a[0], b[0]), g.f("mul", a[1], b[1]))
	s = g.f("add", s, g.f("mul", a[2], b[2]))
	return g.f("add", s, g.f("mul", a[3], b[3]))
}

// cubic4 is kernel.go's cubic4; it branches to bil for the bilinear
// fallback.
func (g *warpGen) cubic4(sx, sy, res, store, bil string) {
	ax, ay := g.f("sub", sx, imm(0.5)), g.f("sub", sy, imm(0.5))
	ix, iy := g.truncInt(ax), g.truncInt(ay)
	// ix-1 < 0 || ix+2 >= w (ix ≥ 0 here: ax > -0.5)
	out := g.or(g.pred("lt", "s32", ix, "1"), g.pred("lt", "s32", iy, "1"))
	out = g.or(out, g.or(g.pred("ge", "s32", g.i("add", ix, "2"), g.w), g.pred("ge", "s32", g.i("add", iy, "2"), g.h)))
	g.ins("@%s bra %s", out, bil)
	cx := g.cubicWeights(g.f("sub", ax, g.toF(ix)))
	var vals [4]string
	for j := range 4 {
		o := g.i("add", g.i("mul.lo", g.i("add", iy, fmt.Sprint(j-1)), g.w), g.i("sub", ix, "1"))
		var row [4]string
		for i := range 4 {
			v, bad := g.sample(g.i("add", o, fmt.Sprint(i)))
			g.ins("@%s bra %s", bad, bil)
			row[i] = v
		}
		vals[j] = g.convol4(cx, row)
	}
	cy := g.cubicWeights(g.f("sub", ay, g.toF(iy)))
	g.ins("mov.f64 %s, %s", res, g.convol4(cy, vals))
	g.ins("bra %s", store)
}

// weight is kernel.go's bilinearWeight or cubicWeight of d.
func (g *warpGen) weight(d string) string {
	a := g.reg(rFD)
	g.ins("abs.f64 %s, %s", a, d)
	le1 := g.pred("le", "f64", a, imm(1))
	if g.sh.Resampling == 1 {
		return g.sel(le1, g.f("sub", imm(1), a), imm(0))
	}
	x2 := g.f("mul", d, d)
	w1 := g.f("add", g.f("mul", x2, g.f("sub", g.f("mul", imm(1.5), a), imm(2.5))), imm(1))
	w2 := g.f("add", g.f("sub", g.f("mul", x2, g.f("add", g.f("mul", imm(-0.5), a), imm(2.5))), g.f("mul", imm(4), a)), imm(2))
	le2 := g.pred("le", "f64", a, imm(2))
	return g.sel(le1, w1, g.sel(le2, w2, imm(0)))
}

// scaled is d·s when s < 1, else d.
func (g *warpGen) scaled(d, s string) string {
	return g.sel(g.pred("lt", "f64", s, imm(1)), g.f("mul", d, s), d)
}

// general is kernel.go's general: the kernel widened by the scale over
// the window around the sample.
func (g *warpGen) general(sx, sy, res, store, exit string) {
	ax, ay := g.f("sub", sx, imm(0.5)), g.f("sub", sy, imm(0.5))
	ix, iy := g.floorInt(ax), g.floorInt(ay)
	dx, dy := g.f("sub", ax, g.toF(ix)), g.f("sub", ay, g.toF(iy))
	// (filter radius + 1) % 2 − radius; the filter radius is bilinear's 1,
	// cubic's 2: the resampling's number
	init := fmt.Sprint((g.sh.Resampling + 1) % 2)
	j, jMax := g.i("sub", init, g.yrad), g.reg(rR)
	g.ins("mov.u32 %s, %s", jMax, g.yrad)
	iMin, iMax := g.i("sub", init, g.xrad), g.reg(rR)
	g.ins("mov.u32 %s, %s", iMax, g.xrad)
	negIy, negIx := g.i("sub", "0", iy), g.i("sub", "0", ix)
	g.ins("mov.u32 %s, %s", j, g.seli(g.pred("lt", "s32", g.i("add", iy, j), "0"), negIy, j))
	hy := g.i("sub", g.i("sub", g.h, iy), "1")
	g.ins("mov.u32 %s, %s", jMax, g.seli(g.pred("ge", "s32", g.i("add", iy, jMax), g.h), hy, jMax))
	g.ins("mov.u32 %s, %s", iMin, g.seli(g.pred("lt", "s32", g.i("add", ix, iMin), "0"), negIx, iMin))
	wx := g.i("sub", g.i("sub", g.w, ix), "1")
	g.ins("mov.u32 %s, %s", iMax, g.seli(g.pred("ge", "s32", g.i("add", ix, iMax), g.w), wx, iMax))
	g.ins("@%s bra %s", g.pred("lt", "s32", iMax, iMin), exit)
	acc, accW := g.reg(rFD), g.reg(rFD)
	g.ins("mov.f64 %s, %s", acc, imm(0))
	g.ins("mov.f64 %s, %s", accW, imm(0))
	rowLoop, rowDone := g.label(), g.label()
	g.place(rowLoop)
	g.ins("@%s bra %s", g.pred("gt", "s32", j, jMax), rowDone)
	w1 := g.weight(g.scaled(g.f("sub", g.toF(j), dy), g.ys))
	a, aw := g.reg(rFD), g.reg(rFD)
	g.ins("mov.f64 %s, %s", a, imm(0))
	g.ins("mov.f64 %s, %s", aw, imm(0))
	o := g.i("add", g.i("mul.lo", g.i("add", iy, j), g.w), ix)
	i := g.reg(rR)
	g.ins("mov.u32 %s, %s", i, iMin)
	colLoop, colDone, next := g.label(), g.label(), g.label()
	g.place(colLoop)
	g.ins("@%s bra %s", g.pred("gt", "s32", i, iMax), colDone)
	v, bad := g.sample(g.i("add", o, i))
	g.ins("@%s bra %s", bad, next)
	w2 := g.weight(g.scaled(g.f("sub", g.toF(i), dx), g.xs))
	g.fto(a, "add", a, g.f("mul", v, w2))
	g.fto(aw, "add", aw, w2)
	g.place(next)
	g.ins("add.u32 %s, %s, 1", i, i)
	g.ins("bra %s", colLoop)
	g.place(colDone)
	g.fto(acc, "add", acc, g.f("mul", a, w1))
	g.fto(accW, "add", accW, g.f("mul", aw, w1))
	g.ins("add.u32 %s, %s, 1", j, j)
	g.ins("bra %s", rowLoop)
	g.place(rowDone)
	g.ins("@%s bra %s", g.pred("lt", "f64", accW, imm(0.000001)), exit)
	g.ins("mov.f64 %s, %s", res, acc)
	norm := g.or(g.pred("lt", "f64", accW, imm(0.99999)), g.pred("gt", "f64", accW, imm(1.00001)))
	skip := g.label()
	g.ins("@!%s bra %s", norm, skip)
	g.fto(res, "div", acc, accW)
	g.place(skip)
	g.ins("bra %s", store)
}

// average is kernel.go's average over the box (x0, y0)–(x1, y1).
func (g *warpGen) average(x0, y0, x1, y1, res, store, exit string) {
	nan := g.or(g.pred("nan", "f64", x0, y0), g.pred("nan", "f64", x1, y1))
	g.ins("@%s bra %s", nan, exit)
	// the corners in order (no NaN: min and max are the swap)
	x0, x1 = g.f("min", x0, x1), g.f("max", x0, x1)
	y0, y1 = g.f("min", y0, y1), g.f("max", y0, y1)
	fl := func(a string) string {
		r := g.reg(rFD)
		g.ins("cvt.rmi.f64.f64 %s, %s", r, a)
		return r
	}
	ce := func(a string) string {
		r := g.reg(rFD)
		g.ins("cvt.rpi.f64.f64 %s, %s", r, a)
		return r
	}
	ixMin := g.truncInt(g.f("max", fl(g.f("add", x0, imm(1e-10))), imm(0)))
	ixMax := g.truncInt(g.f("min", ce(g.f("sub", x1, imm(1e-10))), g.fw))
	iyMin := g.truncInt(g.f("max", fl(g.f("add", y0, imm(1e-10))), imm(0)))
	iyMax := g.truncInt(g.f("min", ce(g.f("sub", y1, imm(1e-10))), g.fh))
	ixMax = g.seli(g.and(g.pred("eq", "s32", ixMin, ixMax), g.pred("lt", "s32", ixMax, g.w)), g.i("add", ixMax, "1"), ixMax)
	iyMax = g.seli(g.and(g.pred("eq", "s32", iyMin, iyMax), g.pred("lt", "s32", iyMax, g.h)), g.i("add", iyMax, "1"), iyMax)
	fixMin, fixMax := g.toF(ixMin), g.toF(ixMax)
	fiyMin, fiyMax := g.toF(iyMin), g.toF(iyMax)
	total, weight := g.reg(rFD), g.reg(rFD)
	g.ins("mov.f64 %s, %s", total, imm(0))
	g.ins("mov.f64 %s, %s", weight, imm(0))
	// edge weights: the first and last row and column
	yFirst := g.f("sub", imm(1), g.f("sub", y0, fiyMin))
	yLast := g.f("sub", imm(1), g.f("sub", fiyMax, y1))
	xFirst := g.f("sub", imm(1), g.f("sub", x0, fixMin))
	xLast := g.f("sub", imm(1), g.f("sub", fixMax, x1))
	oneY := g.pred("eq", "s32", g.i("add", iyMin, "1"), iyMax)
	oneX := g.pred("eq", "s32", g.i("add", ixMin, "1"), ixMax)
	iy := g.reg(rR)
	g.ins("mov.u32 %s, %s", iy, iyMin)
	rowLoop, rowDone := g.label(), g.label()
	g.place(rowLoop)
	g.ins("@%s bra %s", g.pred("ge", "s32", iy, iyMax), rowDone)
	first := g.pred("eq", "s32", iy, iyMin)
	last := g.pred("eq", "s32", g.i("add", iy, "1"), iyMax)
	wy := g.sel(last, yLast, imm(1))
	wy = g.sel(first, yFirst, wy)
	wy = g.sel(g.and(first, oneY), imm(1), wy)
	ix := g.reg(rR)
	g.ins("mov.u32 %s, %s", ix, ixMin)
	t1 := g.f("mul", wy, xFirst)
	t2 := g.f("mul", wy, xLast)
	colLoop, colDone, next := g.label(), g.label(), g.label()
	g.place(colLoop)
	g.ins("@%s bra %s", g.pred("ge", "s32", ix, ixMax), colDone)
	v, bad := g.sample(g.i("add", g.i("mul.lo", iy, g.w), ix))
	g.ins("@%s bra %s", bad, next)
	fx := g.pred("eq", "s32", ix, ixMin)
	lx := g.pred("eq", "s32", g.i("add", ix, "1"), ixMax)
	w := g.sel(lx, t2, wy)
	w = g.sel(fx, t1, w)
	w = g.sel(g.and(fx, oneX), wy, w)
	g.ins("@!%s bra %s", g.pred("gt", "f64", w, imm(0)), next)
	g.fto(total, "add", total, g.f("mul", v, w))
	g.fto(weight, "add", weight, w)
	g.place(next)
	g.ins("add.u32 %s, %s, 1", ix, ix)
	g.ins("bra %s", colLoop)
	g.place(colDone)
	g.ins("add.u32 %s, %s, 1", iy, iy)
	g.ins("bra %s", rowLoop)
	g.place(rowDone)
	g.ins("@!%s bra %s", g.pred("gt", "f64", weight, imm(0)), exit)
	g.fto(res, "div", total, weight)
	g.ins("bra %s", store)
}

// typeRange is the integer type's range.
func typeRange(t compute.DataType) (lo, hi float64) {
	switch t {
	case compute.U8:
		return 0, 255
	case compute.U16:
		return 0, 65535
	case compute.I16:
		return -32768, 32767
	case compute.U32:
		return 0, 4294967295
	case compute.I32:
		return -2147483648, 2147483647
	}
	return 0, 0
}

// store is kernel.go's store: float32 rounded once; integers rounded half
// up (half away from zero below 0), clamped and moved off the target's
// nodata; then the pixel is marked filled.
func (g *warpGen) store(idx, v string) {
	typ, size := g.elem()
	a := g.addr(g.dst, idx, size)
	if typ == "f32" {
		f := g.reg(rF)
		g.ins("cvt.rn.f32.f64 %s, %s", f, v)
		g.ins("st.global.f32 [%s], %s", a, f)
	} else {
		lo, hi := typeRange(g.sh.Type)
		h := g.f("add", v, imm(0.5))
		var rr string
		if lo < 0 {
			rr = g.reg(rFD)
			g.ins("cvt.rmi.f64.f64 %s, %s", rr, h)
		} else {
			rr = g.reg(rFD)
			g.ins("cvt.rzi.f64.f64 %s, %s", rr, h)
		}
		rr = g.sel(g.pred("gt", "f64", v, imm(hi)), imm(hi), rr)
		rr = g.sel(g.pred("lt", "f64", v, imm(lo)), imm(lo), rr)
		if g.sh.DstNoData {
			eq := g.pred("eq", "f64", rr, g.dnd)
			moved := g.sel(g.pred("eq", "f64", rr, imm(lo)), g.f("add", rr, imm(1)), g.f("sub", rr, imm(1)))
			rr = g.sel(eq, moved, rr)
		}
		q := g.reg(rR)
		if lo < 0 {
			g.ins("cvt.rzi.s32.f64 %s, %s", q, rr)
		} else {
			g.ins("cvt.rzi.u32.f64 %s, %s", q, rr)
		}
		st := map[int]string{1: "u8", 2: "u16", 4: "u32"}[size]
		g.ins("st.global.%s [%s], %s", st, a, q)
	}
	one := g.reg(rR)
	g.ins("mov.u32 %s, 1", one)
	g.ins("st.global.u8 [%s], %s", g.addr(g.filled, idx, 1), one)
}
