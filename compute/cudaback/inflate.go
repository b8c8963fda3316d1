package cudaback

import (
	"fmt"
	"math"
	"slices"

	"canopy/compute/geotiff"
	"canopy/compute/warp"
	"canopy/native/cuda"
)

// inflation is DEFLATE chunks being inflated on a device: the work is
// queued (startInflate) and its statuses read once it is done (wait).
type inflation struct {
	dev    residentDev
	data   []byte // the streams on the host, page-locked while they go up when pinned
	pinned bool
	n      int
	raw    cuda.DevicePtr // the decoded chunks, chunk i at i·stride
	stride int
	status cuda.DevicePtr
	bufs   []cuda.DevicePtr // everything it allocated, raw and status included
}

// startInflate queues the inflation of DEFLATE streams on dev (entered by
// the caller; the device must be synchronised before data is unpinned,
// which wait and free do): data holds them (spans[2i], spans[2i+1] bound stream i,
// inflatePad zero bytes after the last), chunk i decodes to at most
// caps[i] bytes and at least needs[i]. data must stay untouched until
// finish.
func startInflate(dev residentDev, data []byte, spans []int64, caps, needs []int32) (in *inflation, err error) {
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
	// The streams go up straight from their own pages, page-locked, so
	// that the copy is queued and the host goes on (a staged copy would
	// wait here for the work queued before it).
	in = &inflation{dev: dev, data: data, n: n, stride: stride, pinned: dev.pin(data)}
	defer func() {
		if err != nil {
			dev.sync()
			in.free()
			in = nil
		}
	}()
	alloc := func(bytes int) (cuda.DevicePtr, error) {
		p, err := dev.alloc(max(bytes, 8))
		if err == nil {
			in.bufs = append(in.bufs, p)
		}
		return p, err
	}
	put := func(b []byte) (cuda.DevicePtr, error) {
		p, err := alloc(len(b))
		if err != nil {
			return 0, err
		}
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
	if in.raw, err = alloc(stride * n); err != nil {
		return nil, err
	}
	if in.status, err = alloc(4 * n); err != nil {
		return nil, err
	}
	args := []any{dData, dSpans, in.raw, uint64(stride), dCaps, dNeeds, in.status, uint32(n)}
	return in, dev.launch(spec, n, args)
}

// wait waits for the inflation (and the work queued after it on its
// stream) and returns each chunk's status (inflateOK or why not); free
// releases what it allocated.
func (in *inflation) wait() ([]uint32, error) {
	status := make([]uint32, in.n)
	if err := in.dev.download(raw(status), in.status); err != nil {
		return nil, err
	}
	if err := in.dev.sync(); err != nil {
		return nil, err
	}
	return status, nil
}

// free frees what the inflation allocated (the device is synchronised or
// the work abandoned after an error).
func (in *inflation) free() {
	for _, p := range in.bufs {
		in.dev.free(p)
	}
	in.bufs = nil
	if in.pinned {
		in.dev.unpin(in.data)
		in.pinned = false
	}
}

// storedBand is a stored band being inflated into a plane on the device,
// on a stream of its own (side) where the device forks.
type storedBand struct {
	in    *inflation
	plane cuda.DevicePtr
	side  residentDev
}

// startStored queues the inflation of st's chunks and their placement,
// the predictor undone, into a new device plane; nil (and no error) when
// the device does not take st (the caller decodes it on the host). On a
// device that forks, the work goes on a new stream, so that a band
// started later inflates beside this one.
func (r *warpJob) startStored(st *geotiff.Stored) (sb *storedBand, err error) {
	size := placeSize(st.Type)
	rows := int64(st.Chunks()) * int64(st.ChunkH)
	if size == 0 || rows >= math.MaxInt32 || int64(st.Width)*int64(st.Height) >= math.MaxInt32 {
		return nil, nil
	}
	sb = &storedBand{}
	dev := r.dev
	if f, ok := dev.(forker); ok {
		if sb.side, err = f.fork(); err != nil {
			return nil, err
		}
		dev = sb.side
	}
	defer func() {
		if err != nil {
			sb.abandon(r.dev)
			sb = nil
		}
	}()
	// Kernels are compiled before the band's work is queued: loading one
	// may wait for the work already on the device.
	spec := genPlace(placeShape{Size: size, Predictor: st.Predictor == 2}, r.dev.target())
	if err := r.prepare(spec); err != nil {
		return nil, err
	}
	if sb.plane, err = r.dev.alloc(max(st.Width*st.Height*size, 8)); err != nil {
		return nil, err
	}
	if sb.in, err = startInflate(dev, st.Data, st.Spans, st.Cap, st.Need); err != nil {
		return nil, err
	}
	args := []any{sb.in.raw, uint64(sb.in.stride), sb.plane, uint32(st.Width), uint32(st.Height), uint32(st.ChunkW), uint32(st.ChunkH), uint32(st.Across), uint32(rows)}
	return sb, dev.launch(spec, int((rows+residentBlock-1)/residentBlock), args)
}

// finish waits for the band's inflation and returns its plane, which is
// the caller's from then on; ok is false, and nothing is kept, when a
// chunk did not inflate. What the inflation read stays allocated (and
// the streams page-locked) until release, so that the caller queues its
// next work first. dev is the warp's device.
func (sb *storedBand) finish(dev residentDev) (plane cuda.DevicePtr, ok bool, err error) {
	status, err := sb.in.wait()
	if err == nil {
		ok = !slices.ContainsFunc(status, func(s uint32) bool { return s != inflateOK })
	}
	if !ok {
		sb.abandon(dev)
		return 0, false, err
	}
	plane, sb.plane = sb.plane, 0
	return plane, true, nil
}

// release frees what the inflation read and closes the band's stream
// (once its work is done: after finish); a second call does nothing.
func (sb *storedBand) release() {
	if sb.in != nil {
		sb.in.free()
		sb.in = nil
	}
	if sb.side != nil {
		sb.side.close()
		sb.side = nil
	}
}

// abandon frees the band's memory, its plane included unless finish gave
// it away, after an error (its stream and the warp's are synchronised
// first).
func (sb *storedBand) abandon(dev residentDev) {
	if sb.side != nil {
		sb.side.sync()
	}
	dev.sync()
	sb.release()
	if sb.plane != 0 {
		dev.free(sb.plane)
		sb.plane = 0
	}
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
	sb, err := r.startStored(src.Stored)
	if err != nil {
		return 0, err
	}
	p, err := r.finishStored(src, sb)
	if sb != nil {
		sb.release()
	}
	return p, err
}

// finishStored is stored's second half: sb (nil: not taken) finished
// (the caller releases it), or the band decoded on the host.
func (r *warpJob) finishStored(src *warp.Source, sb *storedBand) (cuda.DevicePtr, error) {
	if sb != nil {
		p, ok, err := sb.finish(r.dev)
		if err != nil || ok {
			return p, err
		}
	}
	src.Plane.Data = make([]byte, src.Plane.Pixels()*src.Plane.Type.Size())
	if err := src.Stored.Decode(src.Plane); err != nil {
		src.Plane.Data = nil
		return 0, err
	}
	return 0, nil
}
