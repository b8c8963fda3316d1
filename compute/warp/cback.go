package warp

import (
	"fmt"
	"unsafe"

	"canopy/compute/par"
	nwarp "canopy/native/warp"
)

// The C kernel reads Segment through its own declaration of the layout.
var _ = [1]struct{}{}[unsafe.Sizeof(Segment{})-48]
var _ = [1]struct{}{}[unsafe.Offsetof(Segment{}.SX)-16]
var _ = [1]struct{}{}[unsafe.Sizeof(Segment{})-unsafe.Sizeof(nwarp.Seg{})]

// cBackend runs the C kernel (native/warp) over blocks of rows on every
// core, one cgo call a block.
type cBackend struct{}

func (cBackend) Name() string { return "c" }

func init() { Register(cBackend{}) }

func (cBackend) Warp(plan *Plan, src *Source, dst *Target) error {
	if err := check(plan, src, dst); err != nil {
		return err
	}
	if plan.Empty {
		return nil
	}
	p := &nwarp.Params{
		Type: int(src.Plane.Type), SrcW: src.Plane.Width, SrcH: src.Plane.Height,
		NoData: src.NoData, HasNoData: src.HasNoData,
		DstW: plan.Dst.Width, DstNoData: dst.NoData, HasDstNoData: dst.HasNoData,
		Resampling: int(plan.Resampling), Use4: plan.Use4,
		XScale: plan.XScale, YScale: plan.YScale, XRadius: plan.XRadius, YRadius: plan.YRadius,
		Filter: plan.Resampling.radius(),
	}
	if len(plan.Segs) == 0 {
		return nil
	}
	segs := unsafe.Pointer(&plan.Segs[0])
	var far unsafe.Pointer
	if len(plan.Far) > 0 {
		far = unsafe.Pointer(&plan.Far[0])
	}
	var firstErr error
	var errOnce = make(chan error, 1)
	par.Blocks(plan.Dst.Height, rowBlock, func(lo, hi int) {
		if err := nwarp.Rows(p, src.Plane.Data, src.Mask, dst.Plane.Data, dst.Filled, segs, plan.RowStart, far, plan.FarStart, lo, hi); err != nil {
			select {
			case errOnce <- err:
			default:
			}
		}
	})
	select {
	case firstErr = <-errOnce:
	default:
	}
	if firstErr != nil {
		return fmt.Errorf("c warp: %v", firstErr)
	}
	return nil
}
