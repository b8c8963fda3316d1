package cudaback

import (
	"fmt"
	"math"

	"canopy/compute/season"
	"canopy/compute/season/normal"
)

// The per-pixel season kernels (season.Runner): one kernel per plan,
// generated as PTX with everything that depends only on the dates as
// immediates (the design matrix, the roles, the dates written as breaks,
// the critical value), so that the driver's JIT unrolls nothing: the code
// is already straight over the dates. One thread is one pixel, reading
// its series down the date-major cube (coalesced: neighbouring threads
// read neighbouring pixels of a date).
//
// The season-trend fit accumulates, in registers over the valid history,
// not the normal matrix XᵀX itself ((p²+p)/2 sums, 105 for K = 6 with a
// trend) but the sums it is made of: with θ = 2π·frac(t) and τ = t − t̄,
// cos jθ·cos kθ = ½(cos (j−k)θ + cos (j+k)θ) and likewise for the other
// products, so XᵀX needs only Σcos mθ and Σsin mθ for m = 1..2K, Στ, Στ²,
// Στ·cos kθ and Στ·sin kθ (6K+3 sums, 39), each one fused multiply-add of
// the date's validity with an immediate; Xᵀy is p more. XᵀX is then
// assembled and factored by Cholesky in registers (float32, a reciprocal
// per pivot), β solved, and a second pass over the dates sums the
// residuals' squares (and, for the monitors, keeps the residuals in local
// memory). The MOSUM, the anomaly rule and the medians (an insertion sort
// in local memory) follow the float32 algorithm of season.Pixels.

// seasonEntry is the season kernels' entry point.
const seasonEntry = "canopy_season"

// seasonBlock is the season kernels' block size.
const seasonBlock = residentBlock

// genSeason generates the kernel of plan p. Parameters: P (u32), the cube
// (T×P float32, date-major), the outputs (len(Outputs) planes of P float32,
// one after the other).
func genSeason(p *season.Plan, t ptxTarget) *kernelSpec {
	g := &seasonGen{b: &ptxBuilder{entry: seasonEntry}, p: p}
	g.kernel()
	about := fmt.Sprintf("season %s over %d dates", p.Model.Kind, len(p.Dates))
	return &kernelSpec{PTX: g.b.finish(t, about), Target: t, Entry: seasonEntry}
}

type seasonGen struct {
	b *ptxBuilder
	p *season.Plan

	P      string // u32
	px     string // u32
	base   string // u64: the pixel's value on date 0
	pb     string // u64: bytes of one date (P·4)
	outPtr string // u64: the pixel's first output
	lmem   string // u64: the local array's address
	cur    string // u64 pointer walking the dates
	curT   int    // the date cur points at
}

// fmov puts an immediate in a new float register.
func (g *seasonGen) fmov(v float32) string {
	r := g.b.reg(rF)
	g.b.ins("mov.f32 %s, %s", r, f32imm(v))
	return r
}

// at moves cur to date t and returns it.
func (g *seasonGen) at(t int) string {
	b := g.b
	d := t - g.curT
	switch {
	case d == 1:
		b.ins("add.u64 %s, %s, %s", g.cur, g.cur, g.pb)
	case d > 1:
		o := b.reg(rRD)
		b.ins("mul.lo.u64 %s, %s, %d", o, g.pb, d)
		b.ins("add.u64 %s, %s, %s", g.cur, g.cur, o)
	}
	g.curT = t
	return g.cur
}

// rewind puts cur back on date 0.
func (g *seasonGen) rewind() {
	g.b.ins("mov.u64 %s, %s", g.cur, g.base)
	g.curT = 0
}

// load reads date t's value and returns it with its validity.
func (g *seasonGen) load(t int) (y, valid string) {
	b := g.b
	a := g.at(t)
	y, valid = b.reg(rF), b.reg(rP)
	b.ins("ld.global.nc.f32 %s, [%s]", y, a)
	b.ins("setp.num.f32 %s, %s, %s", valid, y, y)
	return
}

// local returns the address of 32-bit element i (u32 register) of the
// local array, from byte offset off.
func (g *seasonGen) local(off int, i string) string {
	b := g.b
	w, a := b.reg(rRD), b.reg(rRD)
	b.ins("mul.wide.u32 %s, %s, 4", w, i)
	b.ins("add.u64 %s, %s, %s", a, g.lmem, w)
	if off != 0 {
		b.ins("add.u64 %s, %s, %d", a, a, off)
	}
	return a
}

// store writes output plane o.
func (g *seasonGen) store(o int, v string) {
	b := g.b
	a := b.reg(rRD)
	if o == 0 {
		b.ins("mov.u64 %s, %s", a, g.outPtr)
	} else {
		w := b.reg(rRD)
		b.ins("mul.lo.u64 %s, %s, %d", w, g.pb, o)
		b.ins("add.u64 %s, %s, %s", a, g.outPtr, w)
	}
	b.ins("st.global.f32 [%s], %s", a, v)
}

// gate returns v where pred holds, else NaN.
func (g *seasonGen) gate(pred, v string) string {
	r := g.b.reg(rF)
	g.b.ins("selp.f32 %s, %s, %s, %s", r, v, f32imm(float32(math.NaN())), pred)
	return r
}

func (g *seasonGen) kernel() {
	b, p := g.b, g.p
	g.P = b.param(".u32")
	cube := b.param(".ptr")
	out := b.param(".ptr")
	ctaid, ntid, tid := b.reg(rR), b.reg(rR), b.reg(rR)
	b.ins("mov.u32 %s, %%ctaid.x", ctaid)
	b.ins("mov.u32 %s, %%ntid.x", ntid)
	b.ins("mov.u32 %s, %%tid.x", tid)
	g.px = b.reg(rR)
	b.ins("mul.lo.u32 %s, %s, %s", g.px, ctaid, ntid)
	b.ins("add.u32 %s, %s, %s", g.px, g.px, tid)
	exit := b.reg(rP)
	b.ins("setp.ge.u32 %s, %s, %s", exit, g.px, g.P)
	done := b.label()
	b.ins("@%s bra %s", exit, done)
	off := b.reg(rRD)
	b.ins("mul.wide.u32 %s, %s, 4", off, g.px)
	g.base, g.outPtr, g.pb, g.cur = b.reg(rRD), b.reg(rRD), b.reg(rRD), b.reg(rRD)
	b.ins("add.u64 %s, %s, %s", g.base, cube, off)
	b.ins("add.u64 %s, %s, %s", g.outPtr, out, off)
	b.ins("mul.wide.u32 %s, %s, 4", g.pb, g.P)
	if p.Model.Kind == season.Composite {
		g.composite()
	} else {
		g.fit()
	}
	b.place(done)
	b.ins("ret")
}

// dates returns the dates of the given roles, in order.
func (g *seasonGen) dates(roles ...uint8) []int {
	var ts []int
	for t, r := range g.p.Role {
		for _, want := range roles {
			if r == want {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// useLocal declares the local array of n 32-bit elements.
func (g *seasonGen) useLocal(n int) {
	b := g.b
	b.local = 4 * max(n, 1)
	g.lmem = b.reg(rRD)
	b.ins("mov.u64 %s, %s", g.lmem, b.lmemName())
}

func (g *seasonGen) composite() {
	b, p := g.b, g.p
	fit := g.dates(season.RoleFit)
	g.rewind()
	nan := float32(math.NaN())
	if p.Model.Stat == season.Max {
		best, date, cnt := g.fmov(float32(math.Inf(-1))), g.fmov(nan), g.fmov(0)
		found := b.reg(rP)
		b.ins("setp.ne.u32 %s, %s, %s", found, g.px, g.px) // false
		for _, t := range fit {
			y, valid := g.load(t)
			gt, upd := b.reg(rP), b.reg(rP)
			b.ins("setp.gt.f32 %s, %s, %s", gt, y, best)
			nf := b.reg(rP)
			b.ins("not.pred %s, %s", nf, found)
			b.ins("or.pred %s, %s, %s", gt, gt, nf)
			b.ins("and.pred %s, %s, %s", upd, gt, valid)
			b.ins("selp.f32 %s, %s, %s, %s", best, y, best, upd)
			b.ins("selp.f32 %s, %s, %s, %s", date, f32imm(p.Dates32[t]), date, upd)
			b.ins("or.pred %s, %s, %s", found, found, valid)
			b.ins("@%s add.rn.f32 %s, %s, %s", valid, cnt, cnt, f32imm(1))
		}
		g.store(0, g.gate(found, best))
		g.store(1, cnt)
		g.store(2, date)
		return
	}
	g.useLocal(len(fit))
	n := b.reg(rR)
	b.ins("mov.u32 %s, 0", n)
	lp := b.reg(rRD)
	b.ins("mov.u64 %s, %s", lp, g.lmem)
	for _, t := range fit {
		y, valid := g.load(t)
		b.ins("@%s st.local.f32 [%s], %s", valid, lp, y)
		b.ins("@%s add.u64 %s, %s, 4", valid, lp, lp)
		b.ins("@%s add.u32 %s, %s, 1", valid, n, n)
	}
	cnt := b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", cnt, n)
	g.store(1, cnt)
	g.store(2, g.fmov(nan))
	q := float32(50)
	if p.Model.Stat == season.Percentile {
		q = float32(p.Model.Percentile)
	}
	v := g.sortedQuantile(0, n, q)
	any := b.reg(rP)
	b.ins("setp.ne.u32 %s, %s, 0", any, n)
	g.store(0, g.gate(any, v))
}

// sortLocal sorts the n (u32 register) floats of the local array from
// byte offset off, by insertion.
func (g *seasonGen) sortLocal(off int, n string) {
	b := g.b
	i, j := b.reg(rR), b.reg(rR)
	outer, inner, place, end := b.label(), b.label(), b.label(), b.label()
	p := b.reg(rP)
	b.ins("mov.u32 %s, 1", i)
	b.place(outer)
	b.ins("setp.ge.u32 %s, %s, %s", p, i, n)
	b.ins("@%s bra %s", p, end)
	v := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", v, g.local(off, i))
	b.ins("mov.u32 %s, %s", j, i)
	b.place(inner)
	z := b.reg(rP)
	b.ins("setp.eq.u32 %s, %s, 0", z, j)
	b.ins("@%s bra %s", z, place)
	jm := b.reg(rR)
	b.ins("sub.u32 %s, %s, 1", jm, j)
	w := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", w, g.local(off, jm))
	le := b.reg(rP)
	b.ins("setp.le.f32 %s, %s, %s", le, w, v)
	b.ins("@%s bra %s", le, place)
	b.ins("st.local.f32 [%s], %s", g.local(off, j), w)
	b.ins("mov.u32 %s, %s", j, jm)
	b.ins("bra %s", inner)
	b.place(place)
	b.ins("st.local.f32 [%s], %s", g.local(off, j), v)
	b.ins("add.u32 %s, %s, 1", i, i)
	b.ins("bra %s", outer)
	b.place(end)
}

// sortedQuantile sorts the n floats from byte offset off of the local
// array and returns their type-7 quantile q as season's quantile32 does
// (the median for q = 50); garbage when n = 0.
func (g *seasonGen) sortedQuantile(off int, n string, q float32) string {
	b := g.b
	g.sortLocal(off, n)
	res := g.fmov(float32(math.NaN()))
	skip := b.label()
	zero := b.reg(rP)
	b.ins("setp.eq.u32 %s, %s, 0", zero, n)
	b.ins("@%s bra %s", zero, skip)
	nm1 := b.reg(rR)
	b.ins("sub.u32 %s, %s, 1", nm1, n)
	h := b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", h, nm1)
	b.ins("mul.rn.f32 %s, %s, %s", h, h, f32imm(q))
	b.ins("div.rn.f32 %s, %s, %s", h, h, f32imm(100))
	lo := b.reg(rR)
	b.ins("cvt.rzi.u32.f32 %s, %s", lo, h)
	b.ins("min.u32 %s, %s, %s", lo, lo, nm1)
	b.ins("ld.local.f32 %s, [%s]", res, g.local(off, lo))
	top := b.reg(rP)
	b.ins("setp.ge.u32 %s, %s, %s", top, lo, nm1)
	b.ins("@%s bra %s", top, skip)
	hi := b.reg(rR)
	b.ins("add.u32 %s, %s, 1", hi, lo)
	v1 := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", v1, g.local(off, hi))
	fl, d, fr := b.reg(rF), b.reg(rF), b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", fl, lo)
	b.ins("sub.rn.f32 %s, %s, %s", fr, h, fl)
	b.ins("sub.rn.f32 %s, %s, %s", d, v1, res)
	b.ins("mul.rn.f32 %s, %s, %s", d, fr, d)
	b.ins("add.rn.f32 %s, %s, %s", res, res, d)
	b.place(skip)
	return res
}

// fit emits the season-trend fit and the model after it.
func (g *seasonGen) fit() {
	b, p := g.b, g.p
	m := p.Model
	k := p.Coefs
	X := p.X32
	fitDates := g.dates(season.RoleFit)
	monitoring := m.Kind == season.Mosum || m.Kind == season.Anomaly
	if monitoring {
		g.useLocal(len(fitDates) + 2*len(g.dates(season.RoleMonitor)))
	}
	terms, entry := normal.Sums(p)

	b.comment("pass 1: the sums of X'X and X'y over the valid history")
	sums := make([]string, len(terms))
	for i := range sums {
		sums[i] = g.fmov(0)
	}
	xty := make([]string, k)
	for i := range xty {
		xty[i] = g.fmov(0)
	}
	n := b.reg(rR)
	b.ins("mov.u32 %s, 0", n)
	g.rewind()
	for _, t := range fitDates {
		y, valid := g.load(t)
		w, yv := b.reg(rF), b.reg(rF)
		b.ins("selp.f32 %s, %s, %s, %s", w, f32imm(1), f32imm(0), valid)
		b.ins("selp.f32 %s, %s, %s, %s", yv, y, f32imm(0), valid)
		b.ins("@%s add.u32 %s, %s, 1", valid, n, n)
		for i, f := range terms {
			if i == 0 {
				b.ins("add.rn.f32 %s, %s, %s", sums[0], sums[0], w)
				continue
			}
			b.ins("fma.rn.f32 %s, %s, %s, %s", sums[i], w, f32imm(float32(f(t))), sums[i])
		}
		for q := range k {
			x := X[t*k+q]
			if x == 1 {
				b.ins("add.rn.f32 %s, %s, %s", xty[q], xty[q], yv)
				continue
			}
			b.ins("fma.rn.f32 %s, %s, %s, %s", xty[q], yv, f32imm(x), xty[q])
		}
	}

	b.comment("X'X from the sums, Cholesky, beta")
	L := make([][]string, k)
	for i := range k {
		L[i] = make([]string, i+1)
		for j := 0; j <= i; j++ {
			var r string
			for _, e := range entry[i][j] {
				switch {
				case r == "" && e.Weight == 1:
					r = b.reg(rF)
					b.ins("mov.f32 %s, %s", r, sums[e.Sum])
				case r == "":
					r = b.reg(rF)
					b.ins("mul.rn.f32 %s, %s, %s", r, sums[e.Sum], f32imm(e.Weight))
				default:
					b.ins("fma.rn.f32 %s, %s, %s, %s", r, sums[e.Sum], f32imm(e.Weight), r)
				}
			}
			if r == "" {
				r = g.fmov(0)
			}
			L[i][j] = r
		}
	}
	ok := b.reg(rP)
	b.ins("setp.ge.u32 %s, %s, %d", ok, n, k)
	inv := make([]string, k)
	for c := range k {
		d := L[c][c]
		for q := range c {
			b.ins("fma.rn.f32 %s, %s, %s, %s", d, L[c][q], negOf(g, L[c][q]), d)
		}
		pos := b.reg(rP)
		b.ins("setp.gt.f32 %s, %s, %s", pos, d, f32imm(0))
		b.ins("and.pred %s, %s, %s", ok, ok, pos)
		b.ins("sqrt.rn.f32 %s, %s", d, d)
		inv[c] = b.reg(rF)
		b.ins("rcp.rn.f32 %s, %s", inv[c], d)
		for r := c + 1; r < k; r++ {
			v := L[r][c]
			for q := range c {
				b.ins("fma.rn.f32 %s, %s, %s, %s", v, L[r][q], negOf(g, L[c][q]), v)
			}
			b.ins("mul.rn.f32 %s, %s, %s", v, v, inv[c])
		}
	}
	beta := xty
	for r := range k {
		for q := range r {
			b.ins("fma.rn.f32 %s, %s, %s, %s", beta[r], L[r][q], negOf(g, beta[q]), beta[r])
		}
		b.ins("mul.rn.f32 %s, %s, %s", beta[r], beta[r], inv[r])
	}
	for r := k - 1; r >= 0; r-- {
		for q := r + 1; q < k; q++ {
			b.ins("fma.rn.f32 %s, %s, %s, %s", beta[r], L[q][r], negOf(g, beta[q]), beta[r])
		}
		b.ins("mul.rn.f32 %s, %s, %s", beta[r], beta[r], inv[r])
	}

	b.comment("pass 2: the residuals")
	rss := g.fmov(0)
	nm := b.reg(rR)
	b.ins("mov.u32 %s, 0", nm)
	var ep, dp string
	if monitoring {
		// e[0 .. n+nm) the residuals in date order, then from byte
		// dOff the dates of the valid monitoring dates.
		ep, dp = b.reg(rRD), b.reg(rRD)
		b.ins("mov.u64 %s, %s", ep, g.lmem)
		b.ins("add.u64 %s, %s, %d", dp, g.lmem, 4*(len(fitDates)+len(g.dates(season.RoleMonitor))))
	}
	roles := []uint8{season.RoleFit}
	if monitoring {
		roles = append(roles, season.RoleMonitor)
	}
	g.rewind()
	for _, t := range g.dates(roles...) {
		y, valid := g.load(t)
		f := b.reg(rF)
		b.ins("mul.rn.f32 %s, %s, %s", f, beta[0], f32imm(X[t*k]))
		for q := 1; q < k; q++ {
			b.ins("fma.rn.f32 %s, %s, %s, %s", f, beta[q], f32imm(X[t*k+q]), f)
		}
		r := b.reg(rF)
		b.ins("sub.rn.f32 %s, %s, %s", r, y, f)
		if p.Role[t] == season.RoleFit {
			b.ins("@%s fma.rn.f32 %s, %s, %s, %s", valid, rss, r, r, rss)
		} else {
			b.ins("@%s add.u32 %s, %s, 1", valid, nm, nm)
			dt := g.fmov(p.Dates32[t])
			b.ins("@%s st.local.f32 [%s], %s", valid, dp, dt)
			b.ins("@%s add.u64 %s, %s, 4", valid, dp, dp)
		}
		if monitoring {
			b.ins("@%s st.local.f32 [%s], %s", valid, ep, r)
			b.ins("@%s add.u64 %s, %s, 4", valid, ep, ep)
		}
	}
	nf := b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", nf, n)
	switch m.Kind {
	case season.Harmonic:
		rmse := b.reg(rF)
		b.ins("div.rn.f32 %s, %s, %s", rmse, rss, nf)
		b.ins("sqrt.rn.f32 %s, %s", rmse, rmse)
		g.store(0, g.gate(ok, rmse))
		g.store(1, nf)
		for q := range k {
			g.store(2+q, g.gate(ok, beta[q]))
		}
	case season.Mosum:
		g.mosum(ok, n, nm, nf, rss, len(fitDates)+len(g.dates(season.RoleMonitor)))
	case season.Anomaly:
		g.anomaly(ok, n, nm, len(fitDates)+len(g.dates(season.RoleMonitor)))
	}
}

// negOf returns −x in a new register.
func negOf(g *seasonGen, x string) string {
	r := g.b.reg(rF)
	g.b.ins("neg.f32 %s, %s", r, x)
	return r
}

// countOut writes the count plane of the monitors: n + nm.
func (g *seasonGen) countOut(n, nm string) {
	b := g.b
	s := b.reg(rR)
	b.ins("add.u32 %s, %s, %s", s, n, nm)
	c := b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", c, s)
	g.store(3, c)
}

// mosum emits the MOSUM monitor (season.Pixels' mosum32) over the
// residuals in the local array (the dates of the valid monitoring dates
// from element dOff on).
func (g *seasonGen) mosum(ok, n, nm, nf, rss string, dOff int) {
	b, p := g.b, g.p
	nan := float32(math.NaN())
	g.countOut(n, nm)
	brk, mag, conf := g.fmov(nan), g.fmov(nan), g.fmov(nan)
	skip := b.label()
	nd, K := b.reg(rFD), b.reg(rR)
	b.ins("cvt.rn.f64.u32 %s, %s", nd, n)
	b.ins("mul.rn.f64 %s, %s, %s", nd, nd, f64imm(p.Model.H))
	b.ins("cvt.rmi.f64.f64 %s, %s", nd, nd)
	b.ins("cvt.rzi.u32.f64 %s, %s", K, nd)
	go_ := b.reg(rP)
	q := b.reg(rP)
	b.ins("setp.gt.u32 %s, %s, %d", q, n, p.Coefs)
	b.ins("and.pred %s, %s, %s", go_, ok, q)
	b.ins("setp.gt.u32 %s, %s, 1", q, K)
	b.ins("and.pred %s, %s, %s", go_, go_, q)
	b.ins("setp.ne.u32 %s, %s, 0", q, nm)
	b.ins("and.pred %s, %s, %s", go_, go_, q)
	sigma := b.reg(rF)
	dof := b.reg(rR)
	b.ins("sub.u32 %s, %s, %d", dof, n, p.Coefs)
	b.ins("cvt.rn.f32.u32 %s, %s", sigma, dof)
	b.ins("div.rn.f32 %s, %s, %s", sigma, rss, sigma)
	b.ins("sqrt.rn.f32 %s, %s", sigma, sigma)
	b.ins("setp.gt.f32 %s, %s, %s", q, sigma, f32imm(0))
	b.ins("and.pred %s, %s, %s", go_, go_, q)
	nogo := b.reg(rP)
	b.ins("not.pred %s, %s", nogo, go_)
	b.ins("@%s bra %s", nogo, skip)
	norm := b.reg(rF)
	b.ins("sqrt.rn.f32 %s, %s", norm, nf)
	b.ins("mul.rn.f32 %s, %s, %s", norm, sigma, norm)
	// sum = Σ e[n−K .. n)
	sum := g.fmov(0)
	i := b.reg(rR)
	b.ins("sub.u32 %s, %s, %s", i, n, K)
	l1, l1e := b.label(), b.label()
	b.place(l1)
	b.ins("setp.ge.u32 %s, %s, %s", q, i, n)
	b.ins("@%s bra %s", q, l1e)
	v := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", v, g.local(0, i))
	b.ins("add.rn.f32 %s, %s, %s", sum, sum, v)
	b.ins("add.u32 %s, %s, 1", i, i)
	b.ins("bra %s", l1)
	b.place(l1e)
	b.ins("mov.f32 %s, %s", conf, f32imm(0))
	bi := b.reg(rR)
	b.ins("mov.u32 %s, 4294967295", bi)
	crit := f32imm(float32(p.Critval))
	j := b.reg(rR)
	b.ins("mov.u32 %s, 0", j)
	l2, l2e := b.label(), b.label()
	b.place(l2)
	b.ins("setp.ge.u32 %s, %s, %s", q, j, nm)
	b.ins("@%s bra %s", q, l2e)
	kk := b.reg(rR)
	b.ins("add.u32 %s, %s, %s", kk, n, j)
	ek, eo := b.reg(rF), b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", ek, g.local(0, kk))
	ko := b.reg(rR)
	b.ins("sub.u32 %s, %s, %s", ko, kk, K)
	b.ins("ld.local.f32 %s, [%s]", eo, g.local(0, ko))
	b.ins("sub.rn.f32 %s, %s, %s", ek, ek, eo)
	b.ins("add.rn.f32 %s, %s, %s", sum, sum, ek)
	ms := b.reg(rF)
	b.ins("div.rn.f32 %s, %s, %s", ms, sum, norm)
	b.ins("abs.f32 %s, %s", ms, ms)
	// bound = crit·√(2·logPlus((k+1)/n))
	x := b.reg(rF)
	k1 := b.reg(rR)
	b.ins("add.u32 %s, %s, 1", k1, kk)
	b.ins("cvt.rn.f32.u32 %s, %s", x, k1)
	b.ins("div.rn.f32 %s, %s, %s", x, x, nf)
	lx := b.reg(rF)
	b.ins("lg2.approx.f32 %s, %s", lx, x)
	b.ins("mul.rn.f32 %s, %s, %s", lx, lx, f32imm(float32(math.Ln2)))
	small := b.reg(rP)
	b.ins("setp.le.f32 %s, %s, %s", small, x, f32imm(float32(math.E)))
	b.ins("selp.f32 %s, %s, %s, %s", lx, f32imm(1), lx, small)
	b.ins("add.rn.f32 %s, %s, %s", lx, lx, lx)
	b.ins("sqrt.rn.f32 %s, %s", lx, lx)
	b.ins("mul.rn.f32 %s, %s, %s", lx, lx, crit)
	ratio := b.reg(rF)
	b.ins("div.rn.f32 %s, %s, %s", ratio, ms, lx)
	b.ins("max.f32 %s, %s, %s", conf, conf, ratio)
	first := b.reg(rP)
	b.ins("setp.gt.f32 %s, %s, %s", first, ms, lx)
	none := b.reg(rP)
	b.ins("setp.eq.u32 %s, %s, 4294967295", none, bi)
	b.ins("and.pred %s, %s, %s", first, first, none)
	b.ins("selp.b32 %s, %s, %s, %s", bi, j, bi, first)
	b.ins("add.u32 %s, %s, 1", j, j)
	b.ins("bra %s", l2)
	b.place(l2e)
	has := b.reg(rP)
	b.ins("setp.ne.u32 %s, %s, 4294967295", has, bi)
	nob := b.label()
	b.ins("@!%s bra %s", has, nob)
	b.ins("ld.local.f32 %s, [%s]", brk, g.local(4*dOff, bi))
	b.place(nob)
	med := g.sortedQuantileAt(n, nm)
	b.ins("mov.f32 %s, %s", mag, med)
	b.place(skip)
	g.store(0, brk)
	g.store(1, mag)
	g.store(2, conf)
}

// sortedQuantileAt sorts the cnt residuals from element from (u32
// registers) and returns their median.
func (g *seasonGen) sortedQuantileAt(from, cnt string) string {
	b := g.b
	// Move the local base to element from for the sort, then back.
	old := g.lmem
	nb, w := b.reg(rRD), b.reg(rRD)
	b.ins("mul.wide.u32 %s, %s, 4", w, from)
	b.ins("add.u64 %s, %s, %s", nb, old, w)
	g.lmem = nb
	v := g.sortedQuantile(0, cnt, 50)
	g.lmem = old
	return v
}

// anomaly emits fordead's rule (season.Pixels' anomaly32) over the
// monitoring residuals e[n .. n+nm) of the local array.
func (g *seasonGen) anomaly(ok, n, nm string, dOff int) {
	b, p := g.b, g.p
	m := p.Model
	nan := float32(math.NaN())
	g.countOut(n, nm)
	brk, mag, conf := g.fmov(nan), g.fmov(nan), g.fmov(nan)
	skip := b.label()
	nogo := b.reg(rP)
	b.ins("not.pred %s, %s", nogo, ok)
	b.ins("@%s bra %s", nogo, skip)
	thr := f32imm(float32(m.Threshold))
	// signed returns the directed residual of e.
	signed := func(e string) string {
		switch m.Direction {
		case season.Down:
			r := b.reg(rF)
			b.ins("neg.f32 %s, %s", r, e)
			return r
		case season.Both:
			r := b.reg(rF)
			b.ins("abs.f32 %s, %s", r, e)
			return r
		}
		return e
	}
	start, runA, runN, first := b.reg(rR), b.reg(rR), b.reg(rR), b.reg(rR)
	b.ins("mov.u32 %s, 4294967295", start)
	b.ins("mov.u32 %s, 0", runA)
	b.ins("mov.u32 %s, 0", runN)
	b.ins("mov.u32 %s, 0", first)
	i := b.reg(rR)
	b.ins("mov.u32 %s, 0", i)
	q := b.reg(rP)
	l, le := b.label(), b.label()
	b.place(l)
	b.ins("setp.ge.u32 %s, %s, %s", q, i, nm)
	b.ins("@%s bra %s", q, le)
	k := b.reg(rR)
	b.ins("add.u32 %s, %s, %s", k, n, i)
	e := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", e, g.local(0, k))
	an := b.reg(rP)
	b.ins("setp.gt.f32 %s, %s, %s", an, signed(e), thr)
	// anomalous: first = i if runA == 0; runA++; runN = 0; start = first
	// if start < 0 and runA ≥ Run.
	z, c := b.reg(rP), b.reg(rP)
	b.ins("setp.eq.u32 %s, %s, 0", z, runA)
	b.ins("and.pred %s, %s, %s", z, z, an)
	b.ins("@%s mov.u32 %s, %s", z, first, i)
	b.ins("@%s add.u32 %s, %s, 1", an, runA, runA)
	b.ins("@%s mov.u32 %s, 0", an, runN)
	none := b.reg(rP)
	b.ins("setp.eq.u32 %s, %s, 4294967295", none, start)
	b.ins("setp.ge.u32 %s, %s, %d", c, runA, m.Run)
	b.ins("and.pred %s, %s, %s", c, c, none)
	b.ins("and.pred %s, %s, %s", c, c, an)
	b.ins("@%s mov.u32 %s, %s", c, start, first)
	// normal: runN++; runA = 0; start = −1 if start ≥ 0 and runN ≥ Run.
	nan_ := b.reg(rP)
	b.ins("not.pred %s, %s", nan_, an)
	b.ins("@%s add.u32 %s, %s, 1", nan_, runN, runN)
	b.ins("@%s mov.u32 %s, 0", nan_, runA)
	clr := b.reg(rP)
	b.ins("setp.ge.u32 %s, %s, %d", clr, runN, m.Run)
	b.ins("and.pred %s, %s, %s", clr, clr, nan_)
	b.ins("@%s mov.u32 %s, 4294967295", clr, start)
	b.ins("add.u32 %s, %s, 1", i, i)
	b.ins("bra %s", l)
	b.place(le)
	b.ins("setp.eq.u32 %s, %s, 4294967295", q, start)
	b.ins("@%s bra %s", q, skip)
	// from start: the share of anomalous dates, the date, the median.
	a := b.reg(rR)
	b.ins("mov.u32 %s, 0", a)
	b.ins("mov.u32 %s, %s", i, start)
	l3, l3e := b.label(), b.label()
	b.place(l3)
	b.ins("setp.ge.u32 %s, %s, %s", q, i, nm)
	b.ins("@%s bra %s", q, l3e)
	k3 := b.reg(rR)
	b.ins("add.u32 %s, %s, %s", k3, n, i)
	e3 := b.reg(rF)
	b.ins("ld.local.f32 %s, [%s]", e3, g.local(0, k3))
	an3 := b.reg(rP)
	b.ins("setp.gt.f32 %s, %s, %s", an3, signed(e3), thr)
	b.ins("@%s add.u32 %s, %s, 1", an3, a, a)
	b.ins("add.u32 %s, %s, 1", i, i)
	b.ins("bra %s", l3)
	b.place(l3e)
	left := b.reg(rR)
	b.ins("sub.u32 %s, %s, %s", left, nm, start)
	af, lf := b.reg(rF), b.reg(rF)
	b.ins("cvt.rn.f32.u32 %s, %s", af, a)
	b.ins("cvt.rn.f32.u32 %s, %s", lf, left)
	b.ins("div.rn.f32 %s, %s, %s", conf, af, lf)
	b.ins("ld.local.f32 %s, [%s]", brk, g.local(4*dOff, start))
	from := b.reg(rR)
	b.ins("add.u32 %s, %s, %s", from, n, start)
	med := g.sortedQuantileAt(from, left)
	b.ins("mov.f32 %s, %s", mag, med)
	b.place(skip)
	g.store(0, brk)
	g.store(1, mag)
	g.store(2, conf)
}
