package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"canopy/compute"
	"canopy/compute/request"
	"canopy/compute/season"
	"canopy/compute/stack"
)

// seasonRunFlags are how composite and monitor spread their model's
// blocks: over the devices of the backend (--devices), and over machines
// by parts of the area (--shard).
type seasonRunFlags struct {
	devices string
	shard   string
	// part and parts are --shard's I and N (0 and 1: the whole area).
	part, parts int
}

func (f *seasonRunFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.devices, "devices", "all", "GPUs the model's blocks are dealt to: all, or N (the first N); CPU backends run on one")
	fs.StringVar(&f.shard, "shard", "", "compute part I of N of the area (0 ≤ I < N; by rows of 512-pixel tiles) into OUT.part-I-of-N.tif, or env (Slurm array, Kubernetes Indexed Job): the parts' files are the windows of the whole")
}

// check reads --devices and --shard.
func (f *seasonRunFlags) check() error {
	if _, err := f.deviceCount(); err != nil {
		return err
	}
	var err error
	f.part, f.parts, err = parseShard(f.shard, os.Getenv)
	return err
}

// sharded says whether --shard was given.
func (f *seasonRunFlags) sharded() bool { return f.shard != "" }

// rows is the part's rows of a grid of height rows.
func (f *seasonRunFlags) rows(height int) (int, int) {
	return stack.Part(height, f.part, f.parts)
}

// out is the file a part is written to: OUT.part-I-of-N.tif for --shard,
// else OUT.
func (f *seasonRunFlags) out(tif string) string {
	if !f.sharded() {
		return tif
	}
	return partName(tif, f.part, f.parts)
}

// partName is the file part i of n of OUT goes to: OUT.part-I-of-N.EXT.
func partName(tif string, i, n int) string {
	ext := filepath.Ext(tif)
	return fmt.Sprintf("%s.part-%d-of-%d%s", strings.TrimSuffix(tif, ext), i, n, ext)
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
