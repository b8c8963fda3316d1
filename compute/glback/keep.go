package glback

import (
	"canopy/compute"
	"canopy/compute/season"
)

// KeepCube implements season.Keeper: OpenCube as a season.Resident, for a
// view that keeps a stack's cube on the card and re-runs models over it
// (season.Keep).
func (b *Backend) KeepCube(c season.Cube) (season.Resident, compute.Timings, error) {
	cube, t, err := b.OpenCube(c)
	if err != nil {
		return nil, t, err
	}
	return cube, t, nil
}

var _ season.Keeper = (*Backend)(nil)
