#version 430
// The warp as a gather kernel: one invocation a destination pixel (x, the
// row y), the source band as stored (bytes in uint words), the plan's
// segments and rows; float64 throughout, every intermediate `precise` so
// that no multiply and add are fused, as compute/warp's Go reference
// rounds them.
layout(local_size_x = 64) in;

struct Seg { int start; int n; int k0; int pad; double sx; double sy; double dx; double dy; };

layout(std430, binding = 0) readonly buffer Params {
	double nodata, dst_nodata, xscale, yscale, lo, hi;
	int type, src_w, src_h, dst_w, dst_h, has_nodata, has_dst_nodata, resampling;
	int use4, xradius, yradius, filter_radius, has_mask, is_float, row0, pad_;
} P;
layout(std430, binding = 1) readonly buffer Segs { Seg segs[]; };
layout(std430, binding = 2) readonly buffer Rows { int row_start[]; };
layout(std430, binding = 3) readonly buffer Src { uint src[]; };
layout(std430, binding = 4) readonly buffer Mask { uint mask[]; };
layout(std430, binding = 5) writeonly buffer Dst { uint dst[]; };
layout(std430, binding = 6) coherent buffer Filled { uint filled[]; };
layout(std430, binding = 7) readonly buffer Far { Seg far[]; };
layout(std430, binding = 8) readonly buffer FarRows { int far_start[]; };

double get(int i) {
	switch (P.type) {
	case 1: return double((src[i >> 2] >> uint(8 * (i & 3))) & 0xffu);
	case 2: return double((src[i >> 1] >> uint(16 * (i & 1))) & 0xffffu);
	case 3: return double(int(((src[i >> 1] >> uint(16 * (i & 1))) & 0xffffu) << 16) >> 16);
	case 4: return double(src[i]);
	case 5: return double(int(src[i]));
	}
	return double(uintBitsToFloat(src[i]));
}

bool valid(int i) {
	if (P.has_mask != 0 && ((mask[i >> 2] >> uint(8 * (i & 3))) & 0xffu) != 0u) return false;
	double v = get(i);
	if (isnan(v)) return false;
	return P.has_nodata == 0 || v != P.nodata;
}

void pos(Seg s, int k, out double x, out double y) {
	precise double fk = double(s.k0 + k);
	precise double px = s.dx * fk;
	precise double py = s.dy * fk;
	precise double rx = s.sx + px;
	precise double ry = s.sy + py;
	x = rx;
	y = ry;
}

// tap adds source pixel (x, y) with weight m to acc and dv when it is
// inside the source and valid.
void tap(int x, int y, double m, inout double acc, inout double dv) {
	if (x < 0 || x >= P.src_w || y < 0 || y >= P.src_h) return;
	int j = y * P.src_w + x;
	if (!valid(j)) return;
	precise double t = get(j) * m;
	precise double a = acc + t;
	precise double d = dv + m;
	acc = a;
	dv = d;
}

// The 4-tap kernels keep every weight and value in a scalar: with local
// double arrays (m[4], the cubic's weights and rows) NVIDIA's compiler
// gave results off by about float32's precision (uint32 bilinear off by
// hundreds), where every scalar double path (general) was exact.
bool bilinear4(double sx, double sy, out double res) {
	precise double ax = sx - 0.5lf;
	precise double ay = sy - 0.5lf;
	int ix = int(floor(ax)), iy = int(floor(ay));
	precise double bx = sx - double(ix);
	precise double by = sy - double(iy);
	precise double rx = 1.5lf - bx;
	precise double ry = 1.5lf - by;
	if (ix == -1) { ix = 0; rx = 1.0lf; }
	if (iy == -1) { iy = 0; ry = 1.0lf; }
	precise double qx = 1.0lf - rx;
	precise double qy = 1.0lf - ry;
	precise double m0 = rx * ry;
	precise double m1 = qx * ry;
	precise double m2 = rx * qy;
	precise double m3 = qx * qy;
	precise double acc = 0.0lf;
	precise double dv = 0.0lf;
	tap(ix, iy, m0, acc, dv);
	tap(ix + 1, iy, m1, acc, dv);
	tap(ix, iy + 1, m2, acc, dv);
	tap(ix + 1, iy + 1, m3, acc, dv);
	if (dv == 1.0lf) { res = acc; return true; }
	if (dv < 0.00001lf) return false;
	precise double q = acc / dv;
	res = q;
	return true;
}

// cubicWeights are the Catmull-Rom weights of fraction x (see the Go
// reference).
void cubicWeights(double x, out double w0, out double w1, out double w2, out double w3) {
	precise double halfX = 0.5lf * x;
	precise double threeX = 3.0lf * x;
	precise double halfX2 = halfX * x;
	precise double a0 = 2.0lf - x;
	precise double a1 = x * a0;
	precise double a2 = -1.0lf + a1;
	precise double c0 = halfX * a2;
	precise double b0 = -5.0lf + threeX;
	precise double b1 = halfX2 * b0;
	precise double c1 = 1.0lf + b1;
	precise double e0 = 4.0lf - threeX;
	precise double e1 = x * e0;
	precise double e2 = 1.0lf + e1;
	precise double c2 = halfX * e2;
	precise double f0 = -1.0lf + x;
	precise double c3 = halfX2 * f0;
	w0 = c0;
	w1 = c1;
	w2 = c2;
	w3 = c3;
}

// convol4 is ((a0·b0 + a1·b1) + a2·b2) + a3·b3, each product and sum
// rounded on its own.
double convol4(double a0, double a1, double a2, double a3, double b0, double b1, double b2, double b3) {
	precise double p0 = a0 * b0;
	precise double p1 = a1 * b1;
	precise double p2 = a2 * b2;
	precise double p3 = a3 * b3;
	precise double s0 = p0 + p1;
	precise double s1 = s0 + p2;
	precise double s2 = s1 + p3;
	return s2;
}

// cubicRow convolves source row y's pixels ix-1 .. ix+2 with the
// weights; false when one of them is not valid.
bool cubicRow(int y, int ix, double c0, double c1, double c2, double c3, out double v) {
	int o = y * P.src_w + ix - 1;
	if (!valid(o) || !valid(o + 1) || !valid(o + 2) || !valid(o + 3)) return false;
	v = convol4(c0, c1, c2, c3, get(o), get(o + 1), get(o + 2), get(o + 3));
	return true;
}

bool cubic4(double sx, double sy, out double res) {
	int w = P.src_w, h = P.src_h;
	precise double ax = sx - 0.5lf;
	precise double ay = sy - 0.5lf;
	int ix = int(ax), iy = int(ay);
	if (ix - 1 < 0 || ix + 2 >= w || iy - 1 < 0 || iy + 2 >= h) return bilinear4(sx, sy, res);
	precise double fx = ax - double(ix);
	precise double fy = ay - double(iy);
	double x0, x1, x2, x3, y0, y1, y2, y3, v0, v1, v2, v3;
	cubicWeights(fx, x0, x1, x2, x3);
	if (!cubicRow(iy - 1, ix, x0, x1, x2, x3, v0) || !cubicRow(iy, ix, x0, x1, x2, x3, v1) ||
	    !cubicRow(iy + 1, ix, x0, x1, x2, x3, v2) || !cubicRow(iy + 2, ix, x0, x1, x2, x3, v3))
		return bilinear4(sx, sy, res);
	cubicWeights(fy, y0, y1, y2, y3);
	res = convol4(y0, y1, y2, y3, v0, v1, v2, v3);
	return true;
}

double weight(double x) {
	double a = abs(x);
	if (P.resampling == 1) return a <= 1.0lf ? 1.0lf - a : 0.0lf;
	if (a <= 1.0lf) {
		precise double x2 = x * x;
		precise double t = 1.5lf * a;
		t = t - 2.5lf;
		t = x2 * t;
		return t + 1.0lf;
	}
	if (a <= 2.0lf) {
		precise double x2 = x * x;
		precise double t = -0.5lf * a;
		t = t + 2.5lf;
		t = x2 * t;
		precise double f = 4.0lf * a;
		t = t - f;
		return t + 2.0lf;
	}
	return 0.0lf;
}

bool general(double sx, double sy, out double res) {
	int w = P.src_w, h = P.src_h;
	precise double ax = sx - 0.5lf;
	precise double ay = sy - 0.5lf;
	int ix = int(floor(ax)), iy = int(floor(ay));
	precise double dx = ax - double(ix);
	precise double dy = ay - double(iy);
	int j = (P.filter_radius + 1) % 2 - P.yradius, jmax = P.yradius;
	int imin = (P.filter_radius + 1) % 2 - P.xradius, imax = P.xradius;
	if (iy + j < 0) j = -iy;
	if (iy + jmax >= h) jmax = h - iy - 1;
	if (ix + imin < 0) imin = -ix;
	if (ix + imax >= w) imax = w - ix - 1;
	if (imax < imin) return false;
	precise double acc = 0.0lf;
	precise double accw = 0.0lf;
	for (; j <= jmax; j++) {
		precise double d = double(j) - dy;
		if (P.yscale < 1.0lf) d = d * P.yscale;
		double w1 = weight(d);
		precise double a = 0.0lf;
		precise double aw = 0.0lf;
		int o = (iy + j) * w + ix;
		for (int i = imin; i <= imax; i++) {
			if (!valid(o + i)) continue;
			precise double e = double(i) - dx;
			if (P.xscale < 1.0lf) e = e * P.xscale;
			double w2 = weight(e);
			precise double t = get(o + i) * w2;
			a = a + t;
			aw = aw + w2;
		}
		precise double ta = a * w1;
		precise double tw = aw * w1;
		acc = acc + ta;
		accw = accw + tw;
	}
	if (accw < 0.000001lf) return false;
	if (accw < 0.99999lf || accw > 1.00001lf) { res = acc / accw; return true; }
	res = acc;
	return true;
}

bool sampleAt(double sx, double sy, out double res) {
	int w = P.src_w, h = P.src_h;
	if (isnan(sx) || isnan(sy) || sx < 0.0lf || sy < 0.0lf) return false;
	precise double ex = sx + 1e-10lf;
	precise double ey = sy + 1e-10lf;
	if (ex > double(w) || ey > double(h)) return false;
	int ix = int(ex), iy = int(ey);
	if (ix == w) ix--;
	if (iy == h) iy--;
	int i = iy * w + ix;
	if (!valid(i)) return false;
	if (P.resampling == 0) { res = get(i); return true; }
	if (P.use4 != 0) {
		if (P.resampling == 1) return bilinear4(sx, sy, res);
		return cubic4(sx, sy, res);
	}
	return general(sx, sy, res);
}

bool average(double x0, double y0, double x1, double y1, out double res) {
	int w = P.src_w, h = P.src_h;
	if (isnan(x0) || isnan(y0) || isnan(x1) || isnan(y1)) return false;
	if (x0 > x1) { double t = x0; x0 = x1; x1 = t; }
	if (y0 > y1) { double t = y0; y0 = y1; y1 = t; }
	precise double a0 = x0 + 1e-10lf;
	precise double a1 = x1 - 1e-10lf;
	precise double b0 = y0 + 1e-10lf;
	precise double b1 = y1 - 1e-10lf;
	int ixmin = int(max(floor(a0), 0.0lf)), ixmax = int(min(ceil(a1), double(w)));
	int iymin = int(max(floor(b0), 0.0lf)), iymax = int(min(ceil(b1), double(h)));
	if (ixmin == ixmax && ixmax < w) ixmax++;
	if (iymin == iymax && iymax < h) iymax++;
	precise double total = 0.0lf;
	precise double wsum = 0.0lf;
	for (int iy = iymin; iy < iymax; iy++) {
		precise double wy = 1.0lf;
		if (iy == iymin && iymin + 1 == iymax) wy = 1.0lf;
		else if (iy == iymin) wy = 1.0lf - (y0 - double(iymin));
		else if (iy + 1 == iymax) wy = 1.0lf - (double(iymax) - y1);
		for (int ix = ixmin; ix < ixmax; ix++) {
			int i = iy * w + ix;
			if (!valid(i)) continue;
			precise double wt = wy;
			if (ix == ixmin && ixmin + 1 == ixmax) {
			} else if (ix == ixmin) {
				wt = wy * (1.0lf - (x0 - double(ixmin)));
			} else if (ix + 1 == ixmax) {
				wt = wy * (1.0lf - (double(ixmax) - x1));
			}
			if (wt > 0.0lf) {
				precise double t = get(i) * wt;
				total = total + t;
				wsum = wsum + wt;
			}
		}
	}
	if (!(wsum > 0.0lf)) return false;
	res = total / wsum;
	return true;
}

void store(int i, double v) {
	if (P.is_float != 0) {
		dst[i] = floatBitsToUint(float(v));
	} else {
		precise double r;
		if (v < P.lo) r = P.lo;
		else if (v > P.hi) r = P.hi;
		else if (P.lo < 0.0lf) r = floor(v + 0.5lf);
		else r = trunc(v + 0.5lf);
		if (P.has_dst_nodata != 0 && r == P.dst_nodata) {
			if (r == P.lo) r = r + 1.0lf;
			else r = r - 1.0lf;
		}
		dst[i] = r < 0.0lf ? uint(int(r)) : uint(r);
	}
	atomicOr(filled[i >> 5], 1u << uint(i & 31));
}

// find returns the segment of row r in list (rows start) holding x, or -1.
int findSeg(int lo, int hi, int x, bool useFar) {
	while (lo < hi) {
		int m = (lo + hi) >> 1;
		Seg s = useFar ? far[m] : segs[m];
		if (s.start + s.n <= x) lo = m + 1;
		else hi = m;
	}
	return lo;
}

void main() {
	int x = int(gl_GlobalInvocationID.x);
	int r = int(gl_GlobalInvocationID.y) + P.row0;
	if (x >= P.dst_w || r >= P.dst_h) return;
	int i = r * P.dst_w + x;
	if ((filled[i >> 5] & (1u << uint(i & 31))) != 0u) return;
	int lo = row_start[r], hi = row_start[r + 1];
	int k = findSeg(lo, hi, x, false);
	if (k >= hi) return;
	Seg s = segs[k];
	if (x < s.start) return;
	double sx, sy, v;
	pos(s, x - s.start, sx, sy);
	if (P.resampling == 3) {
		int flo = far_start[r], fhi = far_start[r + 1];
		int fk = findSeg(flo, fhi, x, true);
		if (fk >= fhi) return;
		Seg f = far[fk];
		if (x < f.start) return;
		double ex, ey;
		pos(f, x - f.start, ex, ey);
		if (average(sx, sy, ex, ey, v)) store(i, v);
		return;
	}
	if (sampleAt(sx, sy, v)) store(i, v);
}
