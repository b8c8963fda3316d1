package cli

import (
	"flag"
	"io"
	"path/filepath"

	"canopy/compute/request"
)

// seasonFlags are the flags composite and monitor share: the stack's
// (stackFlags), how the model's run is spread (seasonRunFlags), the output
// COG and --json.
type seasonFlags struct {
	stack  stackFlags
	run    seasonRunFlags
	tif    string
	asJSON bool
}

// register adds them to fs; index says what the index is for, tif what
// the COG holds.
func (f *seasonFlags) register(fs *flag.FlagSet, index, tif string) {
	f.stack.register(fs, index)
	f.run.register(fs)
	fs.StringVar(&f.tif, "tif", "", tif)
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
}

// parse parses args, the flags with the STACK paths among them, and
// checks what every model over a stack needs: --tif OUT, a good --devices
// and --shard (the stack then holds the part's rows); a cube past
// --memory goes beside the output. It returns the paths.
func (f *seasonFlags) parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	paths, err := parseInterspersed(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if f.tif == "" {
		return nil, request.Errorf("--tif OUT is required")
	}
	if err := f.run.check(); err != nil {
		return nil, err
	}
	f.stack.scratch = filepath.Dir(f.tif)
	f.stack.rows = f.run.rows
	return paths, nil
}
