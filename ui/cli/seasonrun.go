package cli

import (
	"flag"
	"strconv"

	"canopy/compute"
	"canopy/compute/request"
	"canopy/compute/season"
)

// seasonRunFlags are how composite and monitor spread their model's
// blocks: over the devices of the backend (--devices).
type seasonRunFlags struct {
	devices string
}

func (f *seasonRunFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.devices, "devices", "all", "GPUs the model's blocks are dealt to: all, or N (the first N); CPU backends run on one")
}

// deviceCount reads --devices: 0 for all, else N ≥ 1.
func (f *seasonRunFlags) deviceCount() (int, error) {
	if f.devices == "all" || f.devices == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(f.devices)
	if err != nil || n < 1 {
		return 0, request.Errorf("--devices %q: want all or a number of devices, 1 or more", f.devices)
	}
	return n, nil
}

// spread returns the backends the model's blocks go to: b, and with
// several devices one backend on each further one; close closes those.
func (f *seasonRunFlags) spread(b compute.Backend) ([]compute.Backend, func(), error) {
	n, err := f.deviceCount()
	if err != nil {
		return nil, nil, err
	}
	bs, closeAll, err := season.Spread(b, n)
	if err != nil {
		return nil, nil, request.Errorf("--devices %s: %v", f.devices, err)
	}
	return bs, closeAll, nil
}
