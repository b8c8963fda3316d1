package source

import (
	"context"
	"errors"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/pipeline"
	"canopy/compute/pyramid"
	"canopy/compute/request"
)

// Job is what a run computes and how: the indices (names and formulas),
// the backend and its mode, whether every block is checked against the
// float64 truth, and who hears of the progress.
type Job struct {
	Backend compute.Backend
	Mode    string
	Names   []string
	Exprs   []*index.Expr
	// Verify checks every output against the float64 truth; an output
	// that fails is the run's error.
	Verify bool
	// Progress, when set, hears done of total blocks as they pass every
	// sink (pipeline.Options.Progress).
	Progress func(done, total int)
	// InFlight is the most blocks in memory at once (0: the pipeline's
	// choice).
	InFlight int
}

// Run is the one road from a source to the sinks: the block pipeline
// over src's input on the job's backend, every block verified (with
// job.Verify) and handed to the sinks in order; a job of no index hands
// the bands themselves to the sinks (a copy or a conversion). A cancelled ctx stops it
// at the next block with ctx.Err(). An index that needs a band the source
// lacks is a request error (compute/request); an output that fails verification is the run's
// error, naming the backend and the index. Sinks that need finishing (a
// file's layout) are finished by the caller after Run.
//
// Run lives here, not in package compute, because it reads a Source
// (which imports the readers of files and products, which import
// compute): the engine's root stays free of I/O.
func Run(ctx context.Context, src Source, job Job, sinks ...pipeline.Sink) (*pipeline.Result, error) {
	res, err := pipeline.Run(ctx, src.Input(), job.options(), sinks...)
	return job.checked(res, err)
}

// RunViews is Run over an image opened by views (OpenViews): the whole
// image by blocks through the pipeline, from handles of its own, the
// same verification and errors.
func RunViews(ctx context.Context, im *pyramid.Image, job Job, sinks ...pipeline.Sink) (*pipeline.Result, error) {
	res, err := im.Run(ctx, job.options(), sinks...)
	return job.checked(res, err)
}

// options are the job as the pipeline's options.
func (job Job) options() pipeline.Options {
	return pipeline.Options{Backend: job.Backend, Mode: job.Mode, Names: job.Names, Exprs: job.Exprs,
		Verify: job.Verify, Progress: job.Progress, InFlight: job.InFlight}
}

// checked is a run's result as Run returns it: a missing role a usage
// error, an output that fails verification the run's error.
func (job Job) checked(res *pipeline.Result, err error) (*pipeline.Result, error) {
	if err != nil {
		var mr *compute.MissingRoleError
		if errors.As(err, &mr) {
			return nil, request.Error{Msg: err.Error()}
		}
		return nil, err
	}
	if job.Verify {
		for o, v := range res.Reports {
			if err := v.Err(job.Backend.Name() + " " + job.Names[o]); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// Planes is a sink that keeps the whole of every output plane: for the
// work that needs the image at once (statistics per stand, the
// difference of two dates, the map on screen).
type Planes struct {
	Width, Height int
	// Out has one Width×Height plane per index.
	Out [][]float32
}

// NewPlanes is a Planes sink for n outputs of a w×h image.
func NewPlanes(w, h, n int) *Planes {
	p := &Planes{Width: w, Height: h}
	for range n {
		p.Out = append(p.Out, compute.NewOutput(w*h))
	}
	return p
}

// Write copies the block's rows of every output into place.
func (p *Planes) Write(b *pipeline.Block) error {
	for i, o := range b.Out {
		copy(p.Out[i][b.Y0*p.Width:], o)
	}
	return nil
}
