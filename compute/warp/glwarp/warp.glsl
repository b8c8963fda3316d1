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

bool bilinear4(double sx, double sy, out double res) {
	int w = P.src_w, h = P.src_h;
	precise double ax = sx - 0.5lf;
	precise double ay = sy - 0.5lf;
	int ix = int(floor(ax)), iy = int(floor(ay));
	precise double rx = 1.5lf - (sx - double(ix));
	precise double ry = 1.5lf - (sy - double(iy));
	if (ix == -1) { ix = 0; rx = 1.0lf; }
	if (iy == -1) { iy = 0; ry = 1.0lf; }
	precise double m[4];
	m[0] = rx * ry;
	m[1] = (1.0lf - rx) * ry;
	m[2] = rx * (1.0lf - ry);
	m[3] = (1.0lf - rx) * (1.0lf - ry);
	precise double acc = 0.0lf;
	precise double dv = 0.0lf;
	for (int k = 0; k < 4; k++) {
		int x = ix + (k & 1), y = iy + (k >> 1);
		if (x < 0 || x >= w || y < 0 || y >= h) continue;
		int j = y * w + x;
		if (!valid(j)) continue;
		dv = dv + m[k];
		precise double t = get(j) * m[k];
		acc = acc + t;
	}
	if (dv == 1.0lf) { res = acc; return true; }
	if (dv < 0.00001lf) return false;
	res = acc / dv;
	return true;
}

void cubicWeights(double x, out double c[4]) {
	precise double halfX = 0.5lf * x;
	precise double threeX = 3.0lf * x;
	precise double halfX2 = halfX * x;
	precise double t;
	t = 2.0lf - x; t = x * t; t = -1.0lf + t; c[0] = halfX * t;
	t = -5.0lf + threeX; t = halfX2 * t; c[1] = 1.0lf + t;
	t = 4.0lf - threeX; t = x * t; t = 1.0lf + t; c[2] = halfX * t;
	t = -1.0lf + x; c[3] = halfX2 * t;
}

double convol4(double a[4], double b[4]) {
	precise double p0 = a[0] * b[0];
	precise double p1 = a[1] * b[1];
	precise double p2 = a[2] * b[2];
	precise double p3 = a[3] * b[3];
	precise double s = p0 + p1;
	s = s + p2;
	s = s + p3;
	return s;
}

bool cubic4(double sx, double sy, out double res) {
	int w = P.src_w, h = P.src_h;
	precise double ax = sx - 0.5lf;
	precise double ay = sy - 0.5lf;
	int ix = int(ax), iy = int(ay);
	if (ix - 1 < 0 || ix + 2 >= w || iy - 1 < 0 || iy + 2 >= h) return bilinear4(sx, sy, res);
	precise double fx = ax - double(ix);
	precise double fy = ay - double(iy);
	double cx[4], cy[4], row[4], vals[4];
	cubicWeights(fx, cx);
	for (int j = -1; j < 3; j++) {
		int o = (iy + j) * w + ix - 1;
		for (int i = 0; i < 4; i++) {
			if (!valid(o + i)) return bilinear4(sx, sy, res);
			row[i] = get(o + i);
		}
		vals[j + 1] = convol4(cx, row);
	}
	cubicWeights(fy, cy);
	res = convol4(cy, vals);
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
