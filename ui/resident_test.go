package ui

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/compute/raster"
	"canopy/compute/residentcpu"
	"canopy/compute/stats"
)

// countingSession is the host session (residentcpu over go-parallel)
// claiming to be on the card, counting its calls.
type countingSession struct {
	compute.ResidentSession
	index, render, download, probe *atomic.Int32
}

func (c countingSession) Probe(x, y int) ([]float32, error) {
	c.probe.Add(1)
	return c.ResidentSession.Probe(x, y)
}

func (c countingSession) Index(names []string, exprs []*index.Expr) (compute.Timings, error) {
	c.index.Add(1)
	return c.ResidentSession.Index(names, exprs)
}

func (c countingSession) Render(o int, v compute.View, dst []byte) (compute.Timings, error) {
	c.render.Add(1)
	return c.ResidentSession.Render(o, v, dst)
}

func (c countingSession) Download(o int, dst []float32) (compute.Timings, error) {
	c.download.Add(1)
	return c.ResidentSession.Download(o, dst)
}

// fakeKeeper keeps the gl test backend's scenes "on the card".
type fakeKeeper struct {
	uploads, index, render, download, probe atomic.Int32
}

func (k *fakeKeeper) onCard(b compute.Backend, info compute.Info) bool {
	return b.Name() == compute.NameGL
}

func (k *fakeKeeper) open(b compute.Backend, bands []compute.BandInput, mask []uint8) (compute.ResidentSession, compute.Timings, error) {
	k.uploads.Add(1)
	s, t, err := residentcpu.Open(engine(), bands, mask)
	if err != nil {
		return nil, t, err
	}
	return countingSession{s, &k.index, &k.render, &k.download, &k.probe}, t, nil
}

func TestKeptOnTheCard(t *testing.T) {
	_, _, _, bs := testBackends()
	k := &fakeKeeper{}
	w := newTestWindow(t, options{}, hooks{backends: bs, keeper: k})
	if k.uploads.Load() != 0 {
		t.Fatalf("the start backend (go) opened %d sessions", k.uploads.Load())
	}
	if d := w.backs.detailOf(compute.NameGL); !containsAll(d, "kept on the card") {
		t.Errorf("gl's detail %q does not say it keeps the scene on the card", d)
	}
	test.Tap(tappable(t, w.backs.radio(compute.NameGL)))
	test.Tap(w.Compute)
	w.Wait()
	if k.uploads.Load() != 1 || k.index.Load() != 1 {
		t.Fatalf("after computing on gl: %d uploads, %d index calls, want 1 and 1", k.uploads.Load(), k.index.Load())
	}
	s := w.shown
	if s.card == nil {
		t.Fatal("the map shown is not drawn through the session")
	}
	// The statistics are the session's, equal to stats.Summarize of the plane.
	want := stats.Summarize(s.plane)
	got := s.summary.summary
	if got.Valid != want.Valid || got.Total != want.Total || got.Min != want.Min || got.Max != want.Max ||
		math.Abs(got.Mean-want.Mean) > 1e-9*math.Abs(want.Mean) || math.Abs(got.Std-want.Std) > 1e-9*want.Std {
		t.Errorf("statistics shown %+v, stats.Summarize %+v", got, want)
	}
	if h := stats.Histogram(s.plane, histBins, s.summary.lo, s.summary.hi); !slices.Equal(h, s.summary.hist) {
		t.Error("histogram shown differs from stats.Histogram of the plane")
	}
	// The plane stays on the card: computing downloads nothing, identify
	// reads the pixel it shows through Probe, an export downloads it.
	if n := k.download.Load(); n != 0 {
		t.Errorf("computing on the card downloaded the plane %d times", n)
	}
	probes := k.probe.Load()
	col, row := s.w/3, s.h/2
	host := s.plane[row*s.w+col]
	seven, err := index.Parse("nir * 0 + 7")
	if err != nil {
		t.Fatal(err)
	}
	// The session's plane made to differ from the host's, so that a read
	// shows where it came from.
	if _, err := s.card.s.Index([]string{"seven"}, []*index.Expr{seven}); err != nil {
		t.Fatal(err)
	}
	if r := w.read(s, col, row); k.probe.Load() != probes+1 || r.value != 7 {
		t.Errorf("identify at (%d, %d) read %g with %d probes, want the session's 7 through one probe (the host plane holds %g)", col, row, r.value, k.probe.Load()-probes, host)
	}
	tif := filepath.Join(t.TempDir(), "kept.tif")
	if err := w.ExportGeoTIFF(tif); err != nil {
		t.Fatal(err)
	}
	if n := k.download.Load(); n != 1 {
		t.Errorf("exporting a GeoTIFF downloaded the plane %d times, want 1", n)
	}
	band, err := raster.Load(tif)
	if err != nil {
		t.Fatal(err)
	}
	if v := band.Data[row*s.w+col]; v != 7 {
		t.Errorf("the GeoTIFF exported holds %g at (%d, %d), the session's plane 7", v, col, row)
	}
	// Put the session's plane back as it was.
	s.card.s.Index([]string{w.idx.name}, []*index.Expr{w.idx.expr})
	// A ramp change re-renders through the session, with no upload or index.
	renders, idx := k.render.Load(), k.index.Load()
	ramps := w.colour.Ramp.Options
	next := ramps[0]
	if next == w.colour.Ramp.Selected {
		next = ramps[1]
	}
	w.colour.Ramp.SetSelected(next)
	w.Wait()
	w.Map.Draw(200, 150)
	if k.render.Load() <= renders {
		t.Error("the ramp change did not render through the session")
	}
	if k.uploads.Load() != 1 || k.index.Load() != idx {
		t.Errorf("the ramp change uploaded (%d sessions) or computed (%d index calls, was %d)", k.uploads.Load(), k.index.Load(), idx)
	}
	// The same scene computed again keeps its session.
	test.Tap(w.Compute)
	w.Wait()
	if k.uploads.Load() != 1 {
		t.Errorf("computing the same scene again opened %d sessions, want 1", k.uploads.Load())
	}
	// The timings show the round trip and the rows kept on the card.
	var rows []string
	for _, o := range test.LaidOutObjects(w.charts.table) {
		if l, ok := o.(*widget.Label); ok {
			rows = append(rows, l.Text)
		}
	}
	for _, want := range []string{compute.NameGL, compute.NameGL + ":" + modeKept, compute.NameGL + ":" + modeKeptRerender} {
		if !slices.Contains(rows, want) {
			t.Errorf("timings table lacks the row %q: %q", want, rows)
		}
	}
	// Back on go: the session is released and the map draws the plane.
	test.Tap(tappable(t, w.backs.radio(compute.NameGo)))
	test.Tap(w.Compute)
	w.Wait()
	if w.shown.card != nil || w.card != nil {
		t.Error("the session stays open on the go backend")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
