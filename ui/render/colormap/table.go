package colormap

import "canopy/compute"

// Table returns the LUT as data for compute's renderers (compute.RenderView
// and the resident sessions of the GPU backends, which colour the view
// where the plane is): the same colours, stretch and class bounds, so
// that compute.RenderView with it draws what RenderView draws.
func (l *LUT) Table() compute.ColorTable {
	t := compute.ColorTable{RGBA: append([]uint32(nil), l.rgba...)}
	if l.ramp.discrete {
		t.Upper = []float32{} // not nil: a table of one class is still classes
		for _, th := range l.classes.Thresholds() {
			t.Upper = append(t.Upper, float32(th))
		}
		return t
	}
	t.Lo, t.Scale = l.lo32, l.scale32
	return t
}
