package cudaback

import (
	"fmt"
	"math"
	"time"

	"canopy/compute/geotiff"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// inflateChunks inflates DEFLATE streams on dev (entered by the caller):
// data holds them (spans[2i], spans[2i+1] bound stream i, inflatePad zero
// bytes after the last), chunk i decodes to at most caps[i] bytes and at
// least needs[i]. The decoded chunks lie on the device at raw, chunk i at
// i·stride, while then queues its work on them; after the device is done
// it returns each chunk's status (inflateOK or why not) and frees what it
// allocated.
func inflateChunks(dev residentDev, data []byte, spans []int64, caps, needs []int32, then func(raw cuda.DevicePtr, stride int) error) (status []uint32, err error) {
	n := len(caps)
	if n == 0 || len(spans) != 2*n || len(needs) != n {
		return nil, fmt.Errorf("inflate: %d spans, %d sizes and %d lengths", len(spans), n, len(needs))
	}
	stride := 0
	for i, c := range caps {
		if c < 0 || needs[i] < 0 || needs[i] > c || spans[2*i] < 0 || spans[2*i] > spans[2*i+1] || spans[2*i+1] > int64(len(data)-inflatePad) {
			return nil, fmt.Errorf("inflate: chunk %d's span or sizes do not fit", i)
		}
		stride = max(stride, int(c))
	}
	stride = (stride + 7) &^ 7
	if int64(stride)*int64(n) > math.MaxInt64/2 {
		return nil, fmt.Errorf("inflate: %d chunks of %d bytes are too many", n, stride)
	}
	spec := genInflate(dev.target())
	if _, err := dev.prepare(spec); err != nil {
		return nil, err
	}
	var bufs []cuda.DevicePtr
	defer func() {
		if err != nil {
			dev.sync()
		}
		for _, p := range bufs {
			dev.free(p)
		}
	}()
	put := func(b []byte) (cuda.DevicePtr, error) {
		p, err := dev.alloc(max(len(b), 8))
		if err != nil {
			return 0, err
		}
		bufs = append(bufs, p)
		return p, dev.upload(p, b)
	}
	dData, err := put(data)
	if err != nil {
		return nil, err
	}
	dSpans, err := put(raw(spans))
	if err != nil {
		return nil, err
	}
	dCaps, err := put(raw(caps))
	if err != nil {
		return nil, err
	}
	dNeeds, err := put(raw(needs))
	if err != nil {
		return nil, err
	}
	out, err := dev.alloc(max(stride*n, 8))
	if err != nil {
		return nil, err
	}
	bufs = append(bufs, out)
	dStatus, err := dev.alloc(4 * n)
	if err != nil {
		return nil, err
	}
	bufs = append(bufs, dStatus)
	args := []any{dData, dSpans, out, uint64(stride), dCaps, dNeeds, dStatus, uint32(n)}
	if err := dev.launch(spec, n, args); err != nil {
		return nil, err
	}
	if then != nil {
		if err := then(out, stride); err != nil {
			return nil, err
		}
	}
	status = make([]uint32, n)
	if err := dev.download(raw(status), dStatus); err != nil {
		return nil, err
	}
	if err := dev.sync(); err != nil {
		return nil, err
	}
	return status, nil
}

// stored returns src's band on the device when it came as stored
// (Source.Stored), inflated there (the caller frees it), or 0 when it has
// its samples on the host: decoded there now when a chunk did not
// inflate on the device, so that the result, or the error, is the host
// reader's.
func (r *warpJob) stored(src *warp.Source) (cuda.DevicePtr, error) {
	if src.Stored == nil || src.Plane.Data != nil {
		return 0, nil
	}
	p, ok, err := r.storedPlane(src.Stored)
	if err != nil || ok {
		return p, err
	}
	src.Plane.Data = make([]byte, src.Plane.Pixels()*src.Plane.Type.Size())
	if err := src.Stored.Decode(src.Plane); err != nil {
		src.Plane.Data = nil
		return 0, err
	}
	return 0, nil
}

// storedPlane inflates st's chunks on the device and places them, the
// predictor undone, into a new device plane, which the caller frees. ok
// is false, and no plane is kept, when a chunk did not inflate (the
// caller then decodes the band on the host).
func (r *warpJob) storedPlane(st *geotiff.Stored) (plane cuda.DevicePtr, ok bool, err error) {
	size := placeSize(st.Type)
	rows := int64(st.Chunks()) * int64(st.ChunkH)
	if size == 0 || rows >= math.MaxInt32 || int64(st.Width)*int64(st.Height) >= math.MaxInt32 {
		return 0, false, nil
	}
	p, err := r.dev.alloc(max(st.Width*st.Height*size, 8))
	if err != nil {
		return 0, false, err
	}
	plane = p
	defer func() {
		if !ok {
			r.dev.free(p)
			plane = 0
		}
	}()
	sh := placeShape{Size: size, Predictor: st.Predictor == 2}
	spec := genPlace(sh, r.dev.target())
	t0 := time.Now()
	jitted, err := r.dev.prepare(spec)
	if err != nil {
		return 0, false, err
	}
	if jitted {
		r.jit += time.Since(t0)
	}
	status, err := inflateChunks(r.dev, st.Data, st.Spans, st.Cap, st.Need, func(raw cuda.DevicePtr, stride int) error {
		args := []any{raw, uint64(stride), plane, uint32(st.Width), uint32(st.Height), uint32(st.ChunkW), uint32(st.ChunkH), uint32(st.Across), uint32(rows)}
		return r.dev.launch(spec, int((rows+residentBlock-1)/residentBlock), args)
	})
	if err != nil {
		return 0, false, err
	}
	for _, s := range status {
		if s != inflateOK {
			return 0, false, nil
		}
	}
	return plane, true, nil
}
