// Package glwarp is the gl warp backend: compute/warp's kernel as a
// GLSL compute shader (warp.glsl), a gather over the destination (one
// invocation a pixel) that reads the source band as stored (bytes in
// storage buffers, no conversion on the host), the plan's segments and
// the mosaic's filled map, in float64 with every intermediate `precise`
// (no fused multiply-add), on a headless EGL context (native/egl; Mesa's
// llvmpipe where there is no GPU). Importing it registers "gl" with
// compute/warp.
package glwarp

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"canopy/compute"
	"canopy/compute/warp"
	"canopy/native/egl"
	"canopy/native/egl/gl"
)

//go:embed warp.glsl
var source string

// EnvDisplay picks the EGL display kind (any, hardware, software,
// surfaceless), as the gl backend's CANOPY_GL_DISPLAY does.
const EnvDisplay = "CANOPY_GL_DISPLAY"

const (
	shaderStorageBarrier = 0x00002000 // GL_SHADER_STORAGE_BARRIER_BIT
	maxStorageBlockSize  = 0x90DE     // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
	local                = 64         // the shader's local_size_x
)

// Backend runs the warp shader on one GL context, owned by a goroutine
// locked to its OS thread; calls are handed to it.
type Backend struct {
	once   sync.Once
	err    error
	device string
	reqs   chan func()
	prog   uint32
	limit  int
}

func init() { warp.Register(&Backend{}) }

// Name implements warp.Backend.
func (b *Backend) Name() string { return "gl" }

// Available starts the context if needed and reports whether the shader
// runs here, with the device or the reason in a user's words.
func (b *Backend) Available() (bool, string) {
	b.once.Do(b.start)
	if b.err != nil {
		return false, b.err.Error()
	}
	return true, b.device
}

func (b *Backend) start() {
	ready := make(chan error, 1)
	b.reqs = make(chan func())
	go func() {
		runtime.LockOSThread()
		kind := egl.Any
		if s := os.Getenv(EnvDisplay); s != "" {
			k, err := egl.ParseKind(strings.ToLower(s))
			if err != nil {
				ready <- fmt.Errorf("gl warp: %s=%s: %w", EnvDisplay, s, err)
				return
			}
			kind = k
		}
		if err := egl.Load(); err != nil {
			ready <- fmt.Errorf("gl warp: %w", err)
			return
		}
		ctx, err := egl.Open(kind, 4, 3)
		if err != nil {
			ready <- fmt.Errorf("gl warp: no OpenGL 4.3 context: %w", err)
			return
		}
		if err := gl.Init(egl.ProcAddress); err != nil {
			ctx.Close()
			ready <- fmt.Errorf("gl warp: %w", err)
			return
		}
		prog, err := gl.CompileCompute(source)
		if err != nil {
			ctx.Close()
			ready <- fmt.Errorf("gl warp: the driver did not compile the warp shader: %w", err)
			return
		}
		b.prog = prog
		var lim int32
		gl.GetIntegerv(maxStorageBlockSize, &lim)
		b.limit = int(uint32(lim))
		if lim <= 0 {
			b.limit = math.MaxInt32
		}
		b.device = fmt.Sprintf("%s, OpenGL %s (%s)", gl.GoStr(gl.GetString(gl.RENDERER)), gl.GoStr(gl.GetString(gl.VERSION)), ctx.Display())
		ready <- nil
		for f := range b.reqs {
			f()
		}
	}()
	b.err = <-ready
}

// params is the shader's Params block (std430: six doubles, then ints).
type params struct {
	nodata, dstNodata, xscale, yscale, lo, hi                         float64
	typ, srcW, srcH, dstW, dstH, hasND, hasDND, resampling            int32
	use4, xradius, yradius, filterRadius, hasMask, isFloat, row0, pad int32
}

func b32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// Warp implements warp.Backend.
func (b *Backend) Warp(plan *warp.Plan, src *warp.Source, dst *warp.Target) error {
	if ok, why := b.Available(); !ok {
		return errors.New(why)
	}
	if err := warp.Check(plan, src, dst); err != nil {
		return err
	}
	if plan.Empty || len(plan.Segs) == 0 {
		return nil
	}
	done := make(chan error, 1)
	b.reqs <- func() { done <- b.run(plan, src, dst) }
	return <-done
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// padded returns b with its length rounded up to whole 32-bit words (at
// least one).
func padded(b []byte) []byte {
	n := max(4, (len(b)+3)&^3)
	if n == len(b) {
		return b
	}
	p := make([]byte, n)
	copy(p, b)
	return p
}

// run warps on the GL thread.
func (b *Backend) run(plan *warp.Plan, src *warp.Source, dst *warp.Target) error {
	W, H := plan.Dst.Width, plan.Dst.Height
	n := W * H
	lo, hi := typeRange(src.Plane.Type)
	p := params{
		nodata: src.NoData, dstNodata: dst.NoData, xscale: plan.XScale, yscale: plan.YScale, lo: lo, hi: hi,
		typ: int32(src.Plane.Type), srcW: int32(src.Plane.Width), srcH: int32(src.Plane.Height), dstW: int32(W), dstH: int32(H),
		hasND: b32(src.HasNoData), hasDND: b32(dst.HasNoData), resampling: int32(plan.Resampling),
		use4: b32(plan.Use4), xradius: int32(plan.XRadius), yradius: int32(plan.YRadius), filterRadius: int32(filterRadius(plan.Resampling)),
		hasMask: b32(src.Mask != nil), isFloat: b32(src.Plane.Type == compute.F32),
	}
	filled := make([]uint32, (n+31)/32)
	for i, f := range dst.Filled {
		if f != 0 {
			filled[i>>5] |= 1 << (i & 31)
		}
	}
	far, farStart := plan.Far, plan.FarStart
	if len(far) == 0 {
		far, farStart = plan.Segs[:1], plan.RowStart[:2]
	}
	blobs := [][]byte{
		bytesOf([]params{p}), bytesOf(plan.Segs), bytesOf(plan.RowStart), padded(src.Plane.Data),
		padded(src.Mask), nil, bytesOf(filled), bytesOf(far), bytesOf(farStart),
	}
	sizes := make([]int, len(blobs))
	for i, bl := range blobs {
		sizes[i] = len(bl)
	}
	sizes[5] = 4 * n
	for i, s := range sizes {
		if s > b.limit {
			return fmt.Errorf("gl warp: a storage buffer of %d MiB is over the driver's limit of %d MiB (buffer %d); use the c backend for this size", s>>20, b.limit>>20, i)
		}
	}
	bufs := make([]uint32, len(blobs))
	gl.GenBuffers(int32(len(bufs)), &bufs[0])
	defer gl.DeleteBuffers(int32(len(bufs)), &bufs[0])
	for i, bl := range blobs {
		gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, bufs[i])
		var data unsafe.Pointer
		if bl != nil {
			data = unsafe.Pointer(&bl[0])
		}
		gl.BufferStorage(gl.SHADER_STORAGE_BUFFER, sizes[i], data, gl.DYNAMIC_STORAGE_BIT)
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), bufs[i], 0, sizes[i])
	}
	gl.UseProgram(b.prog)
	groupsX := uint32((W + local - 1) / local)
	const maxRows = 65535
	for r0 := 0; r0 < H; r0 += maxRows {
		rows := min(maxRows, H-r0)
		if r0 > 0 {
			p.row0 = int32(r0)
			gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT | shaderStorageBarrier)
			gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, bufs[0])
			gl.BufferSubData(gl.SHADER_STORAGE_BUFFER, 0, int(unsafe.Sizeof(p)), unsafe.Pointer(&p))
		}
		gl.DispatchCompute(groupsX, uint32(rows), 1)
	}
	gl.MemoryBarrier(gl.BUFFER_UPDATE_BARRIER_BIT | shaderStorageBarrier)
	out := make([]uint32, n)
	after := make([]uint32, len(filled))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, bufs[5])
	gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 0, 4*n, unsafe.Pointer(&out[0]))
	gl.BindBuffer(gl.SHADER_STORAGE_BUFFER, bufs[6])
	gl.GetBufferSubData(gl.SHADER_STORAGE_BUFFER, 0, 4*len(after), unsafe.Pointer(&after[0]))
	if e := gl.GetError(); e != gl.NO_ERROR {
		return fmt.Errorf("gl warp: the driver reported error 0x%x", e)
	}
	merge(dst, out, filled, after)
	return nil
}

// merge writes the pixels the shader filled (set in after, not in
// before) into the target's plane at its type.
func merge(dst *warp.Target, out, before, after []uint32) {
	p := dst.Plane
	for w, a := range after {
		nw := a &^ before[w]
		for nw != 0 {
			bit := nw & -nw
			nw &^= bit
			i := w<<5 + trailing(bit)
			v := out[i]
			switch p.Type {
			case compute.U8:
				p.U8()[i] = uint8(v)
			case compute.U16:
				p.U16()[i] = uint16(v)
			case compute.I16:
				p.I16()[i] = int16(int32(v))
			case compute.U32:
				p.U32()[i] = v
			case compute.I32:
				p.I32()[i] = int32(v)
			case compute.F32:
				p.F32()[i] = math.Float32frombits(v)
			}
			dst.Filled[i] = 1
		}
	}
}

func trailing(x uint32) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

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

func filterRadius(r warp.Resampling) int {
	switch r {
	case warp.Bilinear:
		return 1
	case warp.Cubic:
		return 2
	}
	return 0
}
