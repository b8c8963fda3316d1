package glback

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/native/egl/gl"
)

// Kept on the card: the gl backend's resident session (compute.Resident).
// The bands are uploaded once, as stored (uint16 stays uint16), into
// device buffers of the session's own; every index is computed from them
// by the generated job shader (jobgen.go, each output in its own buffer)
// into planes that stay there; the statistics are one fused pass over a
// plane (statsSource: Welford partials per work group, histogram and
// class counts) whose per-group records come back (kilobytes) and are
// merged on the host; the view is drawn by a compute shader (viewSource)
// and only its RGBA comes back. Every plane is kept in parts of at most
// one storage-buffer binding, so that any size a binding cannot hold
// works; the view binds every part of its plane at once.
//
// What the host sends a call is small: uniforms, a colour table when it
// changes, and the view's sample positions (ViewSampleAt, computed in
// float64 on the host exactly as compute.RenderView computes them, so that
// the view reads RenderView's pixels whatever the GPU's float64 division
// does: 4·s·(width+height) bytes).

// residentLocal is the work-group size of the statistics and view
// shaders; the statistics' tree reduction assumes it.
const residentLocal = 256

// statsSharedBins is the most histogram bins the statistics shader keeps
// in shared memory (16 KiB of the 32 KiB every GL 4.3 driver gives a work
// group); more bins are counted with atomics in the device histogram.
const statsSharedBins = 4096

// maxStatsGroups is the most work groups of one statistics dispatch (one
// per part): enough to fill a GPU, few enough that the records stay small.
const maxStatsGroups = 256

// statsValuesPerGroup is the values a statistics work group takes at
// least, so that small planes use few groups.
const statsValuesPerGroup = residentLocal * 16

// errClosed is the error of a call on a closed session.
var errClosed = errors.New("resident session is closed")

// errBackendClosed is the error of a call on a session whose backend was
// closed (its buffers went with the context).
var errBackendClosed = errors.New("the gl backend was closed: open a new session")

// session is compute.ResidentSession on a gl backend.
type session struct {
	b *Backend
	w *worker // the context the session's buffers live in

	width, height, n int
	part             int  // pixels per device buffer (a power of two)
	shift            uint // log2(part)
	mode             string

	bands  []compute.BandInput // as given, without their samples
	dBands []devPlane
	dMask  *devPlane

	outs  []devPlane // the planes of the last Index call
	names []string

	hist, recs           uint32 // statistics: histogram and group records
	histBytes, recsBytes int

	lut, samp, view             uint32 // view: colour table, sample positions, RGBA
	lutBytes, sampBytes, viewBy int
	lutWords                    []uint32 // the table in lut, nil when none

	// upPath is how the bands went up: upCUDA, upCUDAStaged, or upGL and
	// the transfer mode.
	upPath string

	closed bool
}

// OpenResident implements compute.Resident: the bands (as stored) and the
// mask are uploaded once into the session's device buffers; the session
// reads the host memory no more. Sessions share the backend's context,
// shader cache and lock: their calls and the backend's runs take turns.
// Closing the backend invalidates its sessions (their calls then fail,
// their Close does nothing).
func (b *Backend) OpenResident(bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
	var t compute.Timings
	w, h, err := compute.CheckResidentBands(bands, mask)
	if err != nil {
		return nil, t, fmt.Errorf("gl: resident session: %w", err)
	}
	n := w * h
	if n > math.MaxUint32 { // the shaders index pixels with 32 bits
		return nil, t, fmt.Errorf("gl: resident session: %dx%d is more than %d pixels", w, h, uint64(math.MaxUint32))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(); err != nil {
		return nil, t, err
	}
	mode, _ := b.jobMode(b.tu.residentMode)
	upload := b.tu.residentUpload
	s := &session{b: b, w: b.w, width: w, height: h, n: n, mode: mode}
	for _, band := range bands {
		band.Plane.Data = nil
		s.bands = append(s.bands, band)
	}
	err = b.w.do(func(st *glState) error {
		t0 := time.Now()
		s.part = st.jobPart(1)
		for 1<<s.shift < s.part {
			s.shift++
		}
		np := s.parts()
		if np+3 > st.maxBlocks {
			return fmt.Errorf("a %dx%d scene is kept in %d buffers of %d pixels; drawing it binds %d, and %s allows a compute shader %d", w, h, np, s.part, np+3, st.renderer, st.maxBlocks)
		}
		var dst []*devPlane
		var src [][]byte
		for _, band := range bands {
			d, err := s.newPlane(st, band.Plane.Type.Size(), true)
			if err != nil {
				return fmt.Errorf("device memory for the %s band: %w", band.Role, err)
			}
			s.dBands = append(s.dBands, d)
			src = append(src, band.Plane.Data)
		}
		if mask != nil {
			d, err := s.newPlane(st, 1, true)
			if err != nil {
				return fmt.Errorf("device memory for the mask: %w", err)
			}
			s.dMask = &d
			src = append(src, mask)
		}
		for i := range s.dBands {
			dst = append(dst, &s.dBands[i])
		}
		if s.dMask != nil {
			dst = append(dst, s.dMask)
		}
		if mode == ModeMapped {
			if _, err := st.ensureRings(); err != nil {
				return err
			}
		}
		if err := glError("allocating the session's buffers"); err != nil {
			return err
		}
		// Planes in CUDA memory are written by CUDA's copy engines from
		// the page-locked bands (cudaup.go); GL's own go through GL.
		var up *cudaUpload
		if st.mem != nil && upload != upGL {
			var err error
			up, err = st.mem.prepareUpload(dst, src, upload == upCUDAStaged)
			if up != nil {
				defer up.done()
			}
			if err != nil {
				return fmt.Errorf("preparing the upload through CUDA: %w", err)
			}
		}
		t.Setup = time.Since(t0)
		t1 := time.Now()
		if up != nil {
			// The clock stops once the stream has finished the copies.
			if err := up.run(s.part, dst, src); err != nil {
				return fmt.Errorf("uploading the bands through CUDA: %w", err)
			}
			s.upPath = up.path()
		} else {
			if err := st.uploadPlanes(s.part, dst, src, mode); err != nil {
				return err
			}
			if err := glError("uploading the bands"); err != nil {
				return err
			}
			s.upPath = upGL + " " + mode
		}
		t.Upload = time.Since(t1)
		t.Total = t.Upload
		return nil
	})
	t.Setup += b.takePending()
	if err != nil {
		if s.w == b.w {
			b.w.do(func(st *glState) error { s.release(st); return nil })
		}
		return nil, t, fmt.Errorf("gl: resident session %dx%d on %s: %w", w, h, b.info.Device, err)
	}
	return s, t, nil
}

var _ compute.Resident = (*Backend)(nil)

// parts is the number of buffers each plane takes.
func (s *session) parts() int { return (s.n + s.part - 1) / s.part }

// partLen is the pixels of part p.
func (s *session) partLen(p int) int { return min(s.part, s.n-p*s.part) }

// newPlane allocates a plane of the session's size in parts, size bytes a
// pixel, each part padded to whole quads.
func (s *session) newPlane(st *glState, size int, dynamic bool) (devPlane, error) {
	d := devPlane{size: size, off: make([]int, s.parts())}
	for p := range s.parts() {
		buf, err := st.newBuffer(quads(s.partLen(p))*4*size, dynamic)
		if err != nil {
			st.deleteBuffers(d.bufs)
			return devPlane{}, err
		}
		d.bufs = append(d.bufs, buf)
	}
	return d, nil
}

// do runs fn on the backend's context, under its lock, if the session and
// its backend are still open.
func (s *session) do(fn func(st *glState) error) error {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if b.w == nil || b.w != s.w {
		return errBackendClosed
	}
	return b.w.do(fn)
}

// Size implements compute.ResidentSession.
func (s *session) Size() (w, h int) { return s.width, s.height }

// Index implements compute.ResidentSession: the job shader generated for
// the formulas (one output buffer each) over the resident bands, part by
// part. Formulas whose bands and planes together need more storage
// buffers than a shader may bind are computed in consecutive groups that
// fit, each group one shader (common subexpressions shared within it).
func (s *session) Index(names []string, exprs []*index.Expr) (t compute.Timings, err error) {
	if s.closed {
		return t, errClosed
	}
	given := make([]string, len(s.bands))
	for i, b := range s.bands {
		given[i] = b.Role
	}
	if err := compute.CheckIndices(names, exprs, given); err != nil {
		return t, err
	}
	if _, err := index.Compile(exprs); err != nil {
		return t, err
	}
	err = s.do(func(st *glState) error {
		groups, err := s.indexGroups(st, names, exprs, given)
		if err != nil {
			return err
		}
		t0 := time.Now()
		progs := make([]*jobProgram, len(groups))
		compiled := false
		for g, grp := range groups {
			p, _, c, err := st.cachedProgram("resident\n"+jobKey(grp.job), strings.Join(grp.job.Names, ", "), func() (string, error) {
				src, err := genSource(grp.job, true)
				if err != nil {
					return "", err
				}
				first, rest, _ := strings.Cut(st.jobDefines(src), "\n")
				return first + "\n#define CN_EXACT 1\n" + rest, nil
			}, s.b.tu.jobHook)
			if err != nil {
				return err
			}
			progs[g], compiled = p, compiled || c
		}
		grew := false
		s.names = nil // until this run succeeds
		for len(s.outs) > len(exprs) {
			st.deleteBuffers(s.outs[len(s.outs)-1].bufs)
			s.outs = s.outs[:len(s.outs)-1]
		}
		for len(s.outs) < len(exprs) {
			d, err := s.newPlane(st, 4, false)
			if err != nil {
				return fmt.Errorf("device memory for %d index planes of %dx%d: %w", len(exprs), s.width, s.height, err)
			}
			s.outs = append(s.outs, d)
			grew = true
		}
		if err := glError(fmt.Sprintf("allocating %d index planes of %dx%d", len(exprs), s.width, s.height)); err != nil {
			return err
		}
		if compiled || grew {
			// The driver finishes a program at its first dispatch, and new
			// buffers commit their pages: both before the clock.
			for g, grp := range groups {
				s.indexDispatch(st, progs[g], grp, true)
			}
			gl.Finish()
			t.Setup = time.Since(t0)
		}
		t1 := time.Now()
		t.Kernel, _, _ = st.timed(func() {
			for g, grp := range groups {
				s.indexDispatch(st, progs[g], grp, false)
			}
		})
		t.Total = time.Since(t1)
		if err := glError("dispatching the index shader"); err != nil {
			return err
		}
		s.names = slices.Clone(names)
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("gl: index %s of %dx%d: %w", strings.Join(names, ","), s.width, s.height, err)
	}
	return t, nil
}

// indexGroup is formulas [first, first+len(job.Exprs)) of an Index call
// as one job: order[k] is the session band of the job's input k.
type indexGroup struct {
	job   *compute.Job
	order []int
	first int
}

// indexGroups cuts the formulas into consecutive groups whose bands, mask
// and planes fit the storage buffers a shader may bind.
func (s *session) indexGroups(st *glState, names []string, exprs []*index.Expr, given []string) ([]indexGroup, error) {
	mask := 0
	if s.dMask != nil {
		mask = 1
	}
	var groups []indexGroup
	for a := 0; a < len(exprs); {
		var roles []string
		b := a
		for b < len(exprs) {
			rs := slices.Clone(roles)
			for _, r := range exprs[b].Roles() {
				if !slices.Contains(rs, r) {
					rs = append(rs, r)
				}
			}
			if len(rs)+mask+(b-a+1) > st.maxBlocks {
				break
			}
			roles, b = rs, b+1
		}
		if b == a {
			return nil, fmt.Errorf("index %s reads %d bands; with the mask and its plane that is more storage buffers than %s allows a compute shader (%d)", names[a], len(exprs[a].Roles()), st.renderer, st.maxBlocks)
		}
		p, err := index.Compile(exprs[a:b])
		if err != nil {
			return nil, err
		}
		j := &compute.Job{Width: s.width, Height: s.height, Names: names[a:b], Exprs: exprs[a:b], Program: p}
		g := indexGroup{job: j, first: a}
		for _, role := range p.Inputs {
			k := slices.Index(given, role)
			g.order = append(g.order, k)
			j.Bands = append(j.Bands, s.bands[k])
		}
		if s.dMask != nil {
			j.Mask = []uint8{} // the shader reads a mask
		}
		groups = append(groups, g)
		a = b
	}
	return groups, nil
}

// indexDispatch runs a group's job shader over every part; warm, instead,
// runs one work group of it (the warm-up before the clock).
func (s *session) indexDispatch(st *glState, p *jobProgram, g indexGroup, warm bool) {
	j := g.job
	useJobProgram(p, j)
	per, most := st.jobGrid()
	for part := range s.parts() {
		nq := quads(s.partLen(part))
		at := 0
		for _, k := range g.order {
			d := &s.dBands[k]
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(at), d.bufs[part], 0, nq*4*d.size)
			at++
		}
		if s.dMask != nil {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(at), s.dMask.bufs[part], 0, nq*4)
			at++
		}
		for o := range j.Exprs {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(at+o), s.outs[g.first+o].bufs[part], 0, nq*16)
		}
		if warm {
			most = min(most, per)
			nq = min(nq, per)
		}
		st.dispatchQuads(nq, per, most)
		if warm {
			break
		}
	}
	gl.MemoryBarrier(shaderStorageBarrierBit | gl.BUFFER_UPDATE_BARRIER_BIT)
}

// plane returns plane o.
func (s *session) plane(o int) (*devPlane, error) {
	if s.closed {
		return nil, errClosed
	}
	if o < 0 || o >= len(s.names) {
		return nil, compute.ErrPlane(o, len(s.names))
	}
	return &s.outs[o], nil
}

// smallBuffer makes *buf hold at least bytes (a GL buffer the host
// writes with glBufferSubData), reallocating it when it is smaller; it
// reports whether it allocated.
func smallBuffer(buf *uint32, have *int, bytes int) bool {
	bytes = max(4, (bytes+3)&^3)
	if *buf != 0 && *have >= bytes {
		return false
	}
	if *buf != 0 {
		gl.DeleteBuffers(1, buf)
	}
	gl.GenBuffers(1, buf)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, *buf)
	gl.BufferStorage(gl.COPY_WRITE_BUFFER, bytes, nil, gl.DYNAMIC_STORAGE_BIT)
	gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
	*have = bytes
	return true
}

// maxHistCopies is the most copies of a shared histogram a work group
// keeps.
const maxHistCopies = 8

// histCopies is how many copies of a histogram of bins bins a work group
// keeps in shared memory: as many as fit, at most maxHistCopies.
func histCopies(bins int) int { return max(1, min(maxHistCopies, statsSharedBins/max(1, bins))) }

// statsShape is what a statistics shader's code depends on.
type statsShape struct {
	// Hist: 0 no histogram, 1 counted in shared memory, 2 in the device
	// histogram directly (more than statsSharedBins bins).
	Hist int
	// Bounds is the number of class bounds (classes - 1; 0: none).
	Bounds int
}

func statsShapeFor(q compute.StatsRequest) statsShape {
	sh := statsShape{Bounds: max(0, len(q.Classes)-1)}
	switch {
	case q.Bins > statsSharedBins:
		sh.Hist = 2
	case q.Bins > 0:
		sh.Hist = 1
	}
	return sh
}

// recordWords is the 32-bit words of one work group's record: mean and m2
// (float64 as two words each, low first), count, min, max (float32
// bits), a pad, then per class bound the values at or above it (by
// ClassOf's chain).
func (sh statsShape) recordWords() int { return 8 + sh.Bounds }

// Uniform locations of the statistics shader.
const (
	locStatsCount   = 0
	locStatsRecBase = 1
	locStatsBins    = 2
	locStatsLo      = 3
	locStatsHi      = 4
	locStatsScale   = 5
	locStatsCopies  = 6
	locStatsBounds  = 8
)

// statsSource is the fused statistics pass over one part of a plane.
// Each invocation takes values in a grid-stride loop and, for each finite
// one, counts it, sums its deviation from the first finite value it met
// and that deviation's square in float64, keeps the minimum and maximum,
// follows ClassOf's chain of class bounds (one counter a bound) and
// counts it in the histogram (stats.Histogram's bin, computed the same
// way in float64). The work group then merges its invocations' moments
// pairwise (Chan et al.) in shared memory, adds the class counters and
// its shared histogram, and writes one record; the host merges the
// records in order, as stats.Summarize merges its blocks'.
func statsSource(sh statsShape) string {
	var b strings.Builder
	fmt.Fprintf(&b, `#version 430 core
// Canopy's gl resident session: fused statistics (compute/glback/resident.go).
#define HIST %d
#define NB %d
#define SHB %d
#define RW %d
layout(local_size_x = %d) in;
layout(std430, binding = 0) readonly restrict buffer Plane { uint v[]; };
layout(std430, binding = 1) restrict buffer Hist { uint hist[]; };
layout(std430, binding = 2) writeonly restrict buffer Recs { uint recs[]; };
layout(location = 0) uniform uint count;
layout(location = 1) uniform uint recBase;
`, sh.Hist, sh.Bounds, statsSharedBins, sh.recordWords(), residentLocal)
	b.WriteString(`#if HIST != 0
layout(location = 2) uniform uint bins;
layout(location = 6) uniform uint copies; // shared histogram copies (HIST 1)
layout(location = 3) uniform uvec2 loBits;
layout(location = 4) uniform uvec2 hiBits;
layout(location = 5) uniform uvec2 scaleBits;
#endif
#if NB > 0
layout(location = 8) uniform uint bounds[NB];
shared uint sCls[NB];
#endif
#if HIST == 1
shared uint sHist[SHB];
#endif
shared double sMean[gl_WorkGroupSize.x];
shared double sM2[gl_WorkGroupSize.x];
shared uint sCnt[gl_WorkGroupSize.x];
shared float sLo[gl_WorkGroupSize.x];
shared float sHi[gl_WorkGroupSize.x];

void main() {
	uint tid = gl_LocalInvocationID.x;
	uint L = gl_WorkGroupSize.x;
#if HIST == 1
	// Warps take the copies in turn, which spreads the atomic adds.
	uint mine = ((tid >> 5u) % copies) * bins;
	for (uint i = tid; i < bins * copies; i += L) {
		sHist[i] = 0u;
	}
#endif
#if NB > 0
	for (uint i = tid; i < uint(NB); i += L) {
		sCls[i] = 0u;
	}
#endif
	memoryBarrierShared();
	barrier();
#if HIST != 0
	double lo = packDouble2x32(loBits);
	double hi = packDouble2x32(hiBits);
	double scale = packDouble2x32(scaleBits);
#endif
#if NB > 0
	float bnd[NB];
	uint above[NB];
	for (int i = 0; i < NB; i++) {
		bnd[i] = uintBitsToFloat(bounds[i]);
		above[i] = 0u;
	}
#endif
	uint cnt = 0u;
	float mn = uintBitsToFloat(0x7f800000u), mx = uintBitsToFloat(0xff800000u);
	double k = 0.0lf;
	precise double s1 = 0.0lf, s2 = 0.0lf;
	bool hasK = false;
	uint stride = gl_NumWorkGroups.x * L;
	for (uint i = gl_WorkGroupID.x * L + tid; i < count; i += stride) {
		uint bits = v[i];
		if ((bits & 0x7f800000u) == 0x7f800000u) {
			continue; // NaN and infinities: not finite, in no bin of a finite range
		}
		float f = uintBitsToFloat(bits);
		double x = double(f);
		if (!hasK) {
			k = x;
			hasK = true;
		}
		precise double d = x - k;
		s1 += d;
		s2 += d * d;
		cnt++;
		mn = min(mn, f);
		mx = max(mx, f);
#if NB > 0
		bool up = true;
		for (int c = 0; c < NB; c++) {
			up = up && f >= bnd[c];
			above[c] += up ? 1u : 0u;
		}
#endif
#if HIST != 0
		if (x >= lo && x <= hi) {
			precise double t = (x - lo) * scale;
			uint bin = min(uint(t), bins - 1u);
#if HIST == 1
			atomicAdd(sHist[mine + bin], 1u);
#else
			atomicAdd(hist[bin], 1u);
#endif
		}
#endif
	}
	// The invocation's moments: mean = K + s1/n, m2 = s2 - s1*s1/n.
	double mean = 0.0lf, m2 = 0.0lf;
	if (cnt > 0u) {
		precise double q = s1 / double(cnt);
		precise double mm = k + q;
		precise double v2 = s2 - s1 * q;
		mean = mm;
		m2 = max(v2, 0.0lf);
	}
	sMean[tid] = mean;
	sM2[tid] = m2;
	sCnt[tid] = cnt;
	sLo[tid] = mn;
	sHi[tid] = mx;
#if NB > 0
	for (int c = 0; c < NB; c++) {
		if (above[c] != 0u) {
			atomicAdd(sCls[c], above[c]);
		}
	}
#endif
	memoryBarrierShared();
	barrier();
	// Merge pairwise: invocation t takes t + hw.
	for (uint hw = L / 2u; hw > 0u; hw >>= 1u) {
		if (tid < hw) {
			uint o = tid + hw;
			uint na = sCnt[tid], nb = sCnt[o];
			if (nb > 0u) {
				if (na == 0u) {
					sMean[tid] = sMean[o];
					sM2[tid] = sM2[o];
				} else {
					uint nn = na + nb;
					precise double d = sMean[o] - sMean[tid];
					precise double w = double(nb) / double(nn);
					precise double nm = sMean[tid] + d * w;
					precise double n2 = sM2[tid] + sM2[o] + d * d * double(na) * w;
					sMean[tid] = nm;
					sM2[tid] = n2;
				}
				sCnt[tid] = na + nb;
				sLo[tid] = min(sLo[tid], sLo[o]);
				sHi[tid] = max(sHi[tid], sHi[o]);
			}
		}
		memoryBarrierShared();
		barrier();
	}
#if HIST == 1
	for (uint i = tid; i < bins; i += L) {
		uint c = 0u;
		for (uint r = 0u; r < copies; r++) {
			c += sHist[r * bins + i];
		}
		if (c != 0u) {
			atomicAdd(hist[i], c);
		}
	}
#endif
	if (tid == 0u) {
		uint r = (recBase + gl_WorkGroupID.x) * uint(RW);
		uvec2 m = unpackDouble2x32(sMean[0]);
		uvec2 q = unpackDouble2x32(sM2[0]);
		recs[r] = m.x;
		recs[r + 1u] = m.y;
		recs[r + 2u] = q.x;
		recs[r + 3u] = q.y;
		recs[r + 4u] = sCnt[0];
		recs[r + 5u] = floatBitsToUint(sLo[0]);
		recs[r + 6u] = floatBitsToUint(sHi[0]);
		recs[r + 7u] = 0u;
#if NB > 0
		for (int c = 0; c < NB; c++) {
			recs[r + 8u + uint(c)] = sCls[c];
		}
#endif
	}
}
`)
	return b.String()
}

// Stats implements compute.ResidentSession: the fused pass (statsSource)
// over each part, the work groups' records merged on the host in order.
func (s *session) Stats(o int, q compute.StatsRequest) (r compute.ResidentStats, t compute.Timings, err error) {
	if _, err := s.plane(o); err != nil {
		return r, t, err
	}
	if err := q.Check(); err != nil {
		return r, t, err
	}
	sh := statsShapeFor(q)
	var res []uint32
	var hist []uint32
	err = s.do(func(st *glState) error {
		plane := &s.outs[o]
		t0 := time.Now()
		prog, _, compiled, err := st.cachedProgram(fmt.Sprintf("resident stats %d %d", sh.Hist, sh.Bounds), "the statistics", func() (string, error) {
			return statsSource(sh), nil
		}, nil)
		if err != nil {
			return err
		}
		groups := make([]int, s.parts())
		total := 0
		for p := range groups {
			groups[p] = max(1, min(maxStatsGroups, st.maxGX, (s.partLen(p)+statsValuesPerGroup-1)/statsValuesPerGroup))
			total += groups[p]
		}
		rw := sh.recordWords()
		grew := smallBuffer(&s.recs, &s.recsBytes, 4*total*rw)
		if q.Bins > 0 {
			grew = smallBuffer(&s.hist, &s.histBytes, 4*q.Bins) || grew
		}
		if compiled || grew {
			t.Setup = time.Since(t0)
		}
		t1 := time.Now()
		gl.UseProgram(prog.prog)
		if q.Bins > 0 {
			zero := float32(0) // all bits zero: every count 0
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.hist)
			gl.ClearBufferData(gl.COPY_WRITE_BUFFER, gl.R32F, gl.RED, gl.FLOAT, unsafe.Pointer(&zero))
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
			gl.MemoryBarrier(shaderStorageBarrierBit | gl.BUFFER_UPDATE_BARRIER_BIT)
			gl.Uniform1ui(locStatsBins, uint32(q.Bins))
			if sh.Hist == 1 {
				gl.Uniform1ui(locStatsCopies, uint32(histCopies(q.Bins)))
			}
			set2 := func(loc int32, v float64) {
				u := math.Float64bits(v)
				gl.Uniform2ui(loc, uint32(u), uint32(u>>32))
			}
			set2(locStatsLo, q.Lo)
			set2(locStatsHi, q.Hi)
			set2(locStatsScale, float64(q.Bins)/(q.Hi-q.Lo))
		}
		for i, c := range q.Classes[:sh.Bounds] {
			gl.Uniform1ui(int32(locStatsBounds+i), math.Float32bits(float32(c.Hi)))
		}
		t.Kernel, _, _ = st.timed(func() {
			base := 0
			for p, g := range groups {
				gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 0, plane.bufs[p], 0, quads(s.partLen(p))*16)
				if q.Bins > 0 {
					gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 1, s.hist, 0, 4*q.Bins)
				} else {
					gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 1, s.recs, 0, 4) // unread
				}
				gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, 2, s.recs, 0, 4*total*rw)
				gl.Uniform1ui(locStatsCount, uint32(s.partLen(p)))
				gl.Uniform1ui(locStatsRecBase, uint32(base))
				gl.DispatchCompute(uint32(g), 1, 1)
				base += g
			}
			gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
		})
		if err := glError("the statistics shader"); err != nil {
			return err
		}
		t2 := time.Now()
		res = make([]uint32, total*rw)
		gl.BindBuffer(gl.COPY_READ_BUFFER, s.recs)
		gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, 4*len(res), unsafe.Pointer(&res[0]))
		if q.Bins > 0 {
			hist = make([]uint32, q.Bins)
			gl.BindBuffer(gl.COPY_READ_BUFFER, s.hist)
			gl.GetBufferSubData(gl.COPY_READ_BUFFER, 0, 4*q.Bins, unsafe.Pointer(&hist[0]))
		}
		gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
		if err := glError("reading the statistics"); err != nil {
			return err
		}
		t.Download = time.Since(t2)
		t.Total = time.Since(t1)
		return nil
	})
	if err != nil {
		return r, t, fmt.Errorf("gl: statistics of %dx%d: %w", s.width, s.height, err)
	}
	return mergeRecords(res, hist, sh, q, s.n), t, nil
}

// mergeRecords reads the statistics shader's records, merging their
// moments in order with Chan et al.'s update (as stats.Summarize merges
// its blocks').
func mergeRecords(res, hist []uint32, sh statsShape, q compute.StatsRequest, n int) compute.ResidentStats {
	var h []int
	if q.Bins > 0 {
		h = make([]int, q.Bins)
		for i, c := range hist {
			h[i] = int(c)
		}
	}
	m := compute.NewStatsMerger(q)
	rw := sh.recordWords()
	for g := 0; g+rw <= len(res); g += rw {
		rec := res[g : g+rw]
		for i := range min(m.Bounds(), sh.Bounds) {
			m.Above(i, int(rec[8+i]))
		}
		m.Add(int(rec[4]), math.Float64frombits(uint64(rec[0])|uint64(rec[1])<<32), math.Float64frombits(uint64(rec[2])|uint64(rec[3])<<32),
			math.Float32frombits(rec[5]), math.Float32frombits(rec[6]))
	}
	return m.Result(q, h, n)
}

// viewShape is what a view shader's code depends on.
type viewShape struct {
	Samples  int  // per axis (compute.ViewSamples: 1 to 3)
	Discrete bool // a class table rather than a continuous ramp
	Parts    int  // buffers of the plane, part pixels each
	Shift    uint // log2 of the part's pixels
}

// Uniform locations of the view shader.
const (
	locViewW      = 0
	locViewPixels = 1
	locViewYs     = 2
	locViewSteps  = 3
	locViewNF     = 4
	locViewLo     = 5
	locViewScale  = 6
	locViewUpper  = 7
	locViewImageW = 8
)

// viewSource is the renderer: one invocation per screen pixel (grid
// stride), reading compute.RenderView's samples (their image columns and
// rows computed on the host), the mean of the finite ones summed in
// float32 in RenderView's order and divided correctly rounded (in
// float64, whose quotient rounds to the float32 one), coloured by
// ColorTable.Entry from the table on the device.
func viewSource(sh viewShape) string {
	var b strings.Builder
	disc := 0
	if sh.Discrete {
		disc = 1
	}
	fmt.Fprintf(&b, `#version 430 core
// Canopy's gl resident session: the view (compute/glback/resident.go).
#define S %du
#define DISCRETE %d
#define SHIFT %du
#define MASK 0x%xu
layout(local_size_x = %d) in;
`, sh.Samples, disc, sh.Shift, (uint64(1)<<sh.Shift)-1, residentLocal)
	for p := range sh.Parts {
		fmt.Fprintf(&b, "layout(std430, binding = %d) readonly restrict buffer P%d { uint p%d[]; };\n", p, p, p)
	}
	fmt.Fprintf(&b, `layout(std430, binding = %d) readonly restrict buffer Lut { uint lut[]; };
layout(std430, binding = %d) readonly restrict buffer Samp { int samp[]; };
layout(std430, binding = %d) writeonly restrict buffer Dst { uint dst[]; };
`, sh.Parts, sh.Parts+1, sh.Parts+2)
	b.WriteString(`layout(location = 0) uniform uint W;
layout(location = 1) uniform uint npix;
layout(location = 2) uniform uint ysOff;
layout(location = 3) uniform uint nsteps;
#if DISCRETE
layout(location = 7) uniform uint upperOff;
#else
layout(location = 4) uniform uint nfBits;
layout(location = 5) uniform uint loBits;
layout(location = 6) uniform uint scaleBits;
#endif
layout(location = 8) uniform uint imgW;

bool isNaN(uint b) { return (b & 0x7fffffffu) > 0x7f800000u; }

// at is the bits of plane pixel i.
uint at(uint i) {
	uint k = i & MASK;
	switch (i >> SHIFT) {
`)
	for p := range sh.Parts - 1 {
		fmt.Fprintf(&b, "\tcase %du: return p%d[k];\n", p, p)
	}
	fmt.Fprintf(&b, "\tdefault: return p%d[k];\n\t}\n}\n", sh.Parts-1)
	b.WriteString(`
// entry is ColorTable.Entry of the value whose bits are vb.
uint entry(uint vb) {
	if (isNaN(vb)) {
		return 0u;
	}
	float v = uintBitsToFloat(vb);
#if DISCRETE
	uint i = 0u;
	while (i < nsteps && v >= uintBitsToFloat(lut[upperOff + i])) {
		i++;
	}
	return 1u + i;
#else
	precise float f = (v - uintBitsToFloat(loBits)) * uintBitsToFloat(scaleBits);
	if (isNaN(floatBitsToUint(f))) {
		return 0u;
	}
	float nf = uintBitsToFloat(nfBits);
	if (f >= 0.0 && f < nf) {
		return 1u + uint(f);
	}
	if (f >= nf) {
		return nsteps;
	}
	return 1u;
#endif
}

void main() {
	uint L = gl_WorkGroupSize.x;
	uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * L;
	for (uint idx = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * L + gl_LocalInvocationID.x; idx < npix; idx += stride) {
		uint sy = idx / W;
		uint sx = idx - sy * W;
		bool inside = false;
		uint vb = 0x7fc00000u;
#if S == 1u
		int ix = samp[sx];
		int iy = samp[ysOff + sy];
		if (ix >= 0 && iy >= 0) {
			inside = true;
			vb = at(uint(iy) * imgW + uint(ix));
		}
#else
		precise float sum = 0.0;
		uint cnt = 0u;
		for (uint ky = 0u; ky < S; ky++) {
			int iy = samp[ysOff + sy * S + ky];
			for (uint kx = 0u; kx < S; kx++) {
				int ix = samp[sx * S + kx];
				if (iy < 0 || ix < 0) {
					continue;
				}
				inside = true;
				uint b = at(uint(iy) * imgW + uint(ix));
				if (isNaN(b)) {
					continue;
				}
				sum = sum + uintBitsToFloat(b);
				cnt++;
			}
		}
		if (cnt > 0u) {
			precise double m = double(sum) / double(cnt);
			vb = floatBitsToUint(float(m));
		}
#endif
		dst[idx] = inside ? lut[entry(vb)] : 0u;
	}
}
`)
	return b.String()
}

// tableWords is a colour table as the view shader reads it: the colours,
// then the class bounds' bits.
func tableWords(t compute.ColorTable) []uint32 {
	w := slices.Clone(t.RGBA)
	for _, u := range t.Upper {
		w = append(w, math.Float32bits(u))
	}
	return w
}

// Render implements compute.ResidentSession: the view drawn on the device
// (viewSource) and its RGBA read back into dst.
func (s *session) Render(o int, v compute.View, dst []byte) (t compute.Timings, err error) {
	if _, err := s.plane(o); err != nil {
		return t, err
	}
	if err := v.Check(); err != nil {
		return t, err
	}
	size := 4 * v.Width * v.Height
	if len(dst) < size {
		return t, fmt.Errorf("view of %dx%d needs %d bytes, has %d", v.Width, v.Height, size, len(dst))
	}
	dst = dst[:size]
	if !v.Drawable() {
		t0 := time.Now()
		clear(dst)
		t.Total = time.Since(t0)
		return t, nil
	}
	sm := compute.ViewSamples(v.Zoom)
	samp := make([]int32, sm*(v.Width+v.Height))
	for sx := range v.Width {
		for k := range sm {
			samp[sx*sm+k] = compute.ViewSampleAt(v.X0, sx, k, sm, v.Zoom, s.width)
		}
	}
	ys := samp[sm*v.Width:]
	for sy := range v.Height {
		for k := range sm {
			ys[sy*sm+k] = compute.ViewSampleAt(v.Y0, sy, k, sm, v.Zoom, s.height)
		}
	}
	words := tableWords(v.Table)
	sh := viewShape{Samples: sm, Discrete: v.Table.Discrete(), Parts: s.parts(), Shift: s.shift}
	err = s.do(func(st *glState) error {
		plane := &s.outs[o]
		t0 := time.Now()
		prog, _, compiled, err := st.cachedProgram(fmt.Sprintf("resident view %+v", sh), "the view", func() (string, error) {
			return viewSource(sh), nil
		}, nil)
		if err != nil {
			return err
		}
		grew := smallBuffer(&s.view, &s.viewBy, size)
		grew = smallBuffer(&s.samp, &s.sampBytes, 4*len(samp)) || grew
		if smallBuffer(&s.lut, &s.lutBytes, 4*len(words)) {
			grew, s.lutWords = true, nil
		}
		if compiled || grew {
			t.Setup = time.Since(t0)
		}
		t1 := time.Now()
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.samp)
		gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, 4*len(samp), unsafe.Pointer(&samp[0]))
		if !slices.Equal(s.lutWords, words) || (s.lutWords == nil) != (words == nil) {
			gl.BindBuffer(gl.COPY_WRITE_BUFFER, s.lut)
			gl.BufferSubData(gl.COPY_WRITE_BUFFER, 0, 4*len(words), unsafe.Pointer(&words[0]))
			s.lutWords = words
		}
		gl.BindBuffer(gl.COPY_WRITE_BUFFER, 0)
		gl.MemoryBarrier(shaderStorageBarrierBit | gl.BUFFER_UPDATE_BARRIER_BIT)
		t.Upload = time.Since(t1)
		gl.UseProgram(prog.prog)
		gl.Uniform1ui(locViewW, uint32(v.Width))
		gl.Uniform1ui(locViewPixels, uint32(v.Width*v.Height))
		gl.Uniform1ui(locViewYs, uint32(sm*v.Width))
		gl.Uniform1ui(locViewImageW, uint32(s.width))
		if v.Table.Discrete() {
			gl.Uniform1ui(locViewSteps, uint32(len(v.Table.Upper)))
			gl.Uniform1ui(locViewUpper, uint32(len(v.Table.RGBA)))
		} else {
			n := len(v.Table.RGBA) - 1
			gl.Uniform1ui(locViewSteps, uint32(n))
			gl.Uniform1ui(locViewNF, math.Float32bits(float32(n)))
			gl.Uniform1ui(locViewLo, math.Float32bits(v.Table.Lo))
			gl.Uniform1ui(locViewScale, math.Float32bits(v.Table.Scale))
		}
		for p := range sh.Parts {
			gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(p), plane.bufs[p], 0, quads(s.partLen(p))*16)
		}
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(sh.Parts), s.lut, 0, 4*len(words))
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(sh.Parts+1), s.samp, 0, 4*len(samp))
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(sh.Parts+2), s.view, 0, size)
		groups := (v.Width*v.Height + residentLocal - 1) / residentLocal
		gx := min(groups, st.maxGX)
		gy := min((groups+gx-1)/gx, st.maxGY)
		t.Kernel, _, _ = st.timed(func() {
			gl.DispatchCompute(uint32(gx), uint32(gy), 1)
			gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT)
		})
		if err := glError("the view shader"); err != nil {
			return err
		}
		t2 := time.Now()
		// Through the read ring on a GPU (a DMA, then all cores copy), by
		// glGetBufferSubData on llvmpipe: the device's transfer mode.
		vp := devPlane{size: 4, bufs: []uint32{s.view}, off: []int{0}}
		if err := st.downloadPlanes(v.Width*v.Height, []*devPlane{&vp}, [][]byte{dst}, s.mode); err != nil {
			return err
		}
		if err := glError("reading the view"); err != nil {
			return err
		}
		t.Download = time.Since(t2)
		t.Total = time.Since(t1)
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("gl: view of %dx%d: %w", v.Width, v.Height, err)
	}
	return t, nil
}

// Download implements compute.ResidentSession: the whole plane, part by
// part, in the device's transfer mode.
func (s *session) Download(o int, dst []float32) (t compute.Timings, err error) {
	if _, err := s.plane(o); err != nil {
		return t, err
	}
	if len(dst) != s.n {
		return t, fmt.Errorf("download of a %dx%d plane into %d values", s.width, s.height, len(dst))
	}
	err = s.do(func(st *glState) error {
		t0 := time.Now()
		if err := st.downloadPlanes(s.part, []*devPlane{&s.outs[o]}, [][]byte{bytesOf(dst)}, s.mode); err != nil {
			return err
		}
		if err := glError("downloading the plane"); err != nil {
			return err
		}
		t.Download = time.Since(t0)
		t.Total = t.Download
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("gl: download of %s: %w", s.names[o], err)
	}
	return t, nil
}

// Probe implements compute.ResidentSession: four bytes of each plane
// come back.
func (s *session) Probe(x, y int) ([]float32, error) {
	if s.closed {
		return nil, errClosed
	}
	if len(s.names) == 0 {
		return nil, compute.ErrPlane(0, 0)
	}
	if x < 0 || y < 0 || x >= s.width || y >= s.height {
		return nil, compute.ErrPixel(x, y, s.width, s.height)
	}
	out := make([]float32, len(s.names))
	i := y*s.width + x
	p, at := i/s.part, 4*(i%s.part)
	err := s.do(func(st *glState) error {
		for o := range out {
			gl.BindBuffer(gl.COPY_READ_BUFFER, s.outs[o].bufs[p])
			gl.GetBufferSubData(gl.COPY_READ_BUFFER, at, 4, unsafe.Pointer(&out[o]))
		}
		gl.BindBuffer(gl.COPY_READ_BUFFER, 0)
		return glError("reading a pixel")
	})
	if err != nil {
		return nil, fmt.Errorf("gl: probe of pixel (%d, %d): %w", x, y, err)
	}
	return out, nil
}

// release frees every buffer of the session (on the context's thread).
func (s *session) release(st *glState) {
	for _, d := range s.dBands {
		st.deleteBuffers(d.bufs)
	}
	s.dBands = nil
	if s.dMask != nil {
		st.deleteBuffers(s.dMask.bufs)
		s.dMask = nil
	}
	for _, d := range s.outs {
		st.deleteBuffers(d.bufs)
	}
	s.outs, s.names = nil, nil
	for _, b := range []*uint32{&s.hist, &s.recs, &s.lut, &s.samp, &s.view} {
		if *b != 0 {
			gl.DeleteBuffers(1, b)
			*b = 0
		}
	}
	s.lutWords = nil
}

// Close implements compute.ResidentSession. A second Close, or one after
// the backend's, does nothing.
func (s *session) Close() error {
	if s.closed {
		return nil
	}
	err := s.do(func(st *glState) error {
		s.release(st)
		return nil
	})
	s.closed = true
	if errors.Is(err, errBackendClosed) {
		return nil // its buffers went with the context
	}
	return err
}

var _ compute.ResidentSession = (*session)(nil)
