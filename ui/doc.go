// Package ui is Canopy's desktop app, built with Fyne: the window foresters
// open to look at index maps (NDVI, EVI, NBR or a formula of their own) of
// the products they have, and at what each backend costs.
//
// The split follows Jacalz/rymdport: this package builds widgets and never
// does the work itself. Opening files and products and loading bands
// (source.Open, source.Whole, or views through source.OpenViews),
// computing the map (source.Run, the terminal's run), timing backends
// (compute.BenchJob), colouring, statistics and charts all come from
// package compute and ui/render, the same functions the command line
// calls; Export GeoTIFF writes through the same COG sink (source.COG). The panels get callbacks, not
// the window; long work (loading, computing, comparing backends, sweeps)
// runs in a goroutine through a small bridge that cancels superseded jobs
// and brings results back to the event goroutine with fyne.Do, so the
// window never freezes. A job is given the backend and its mode when it
// starts; the mode is an argument of each run, never state of the backend.
//
// The map is its own widget package (ui/mapview) whose raster renders only the visible
// viewport at screen resolution through colormap's RenderView, so a
// 10980×10980 scene is held once (the bands as stored, the index as
// float32) and never as a full-size RGBA picture.
//
// `canopy gui --stack FILE...`, File › Open stack… and a stack from the
// archive's search open a stack of dates (compute/stack) in a window of
// its own (timeseries.go): a date slider over that date's index map, the
// model's controls (MOSUM or anomaly rule, harmonics, trend, history and
// monitoring start, level or threshold) and the model's break dates or
// magnitudes over the whole area, run on the window's backend through
// season.Keep: on cuda and gl the cube is uploaded once and every change
// re-runs there, on a CPU backend through its season.Runner, as bridge
// jobs. A click draws a pixel's series, or a stand's (the mean or median
// of its valid pixels on every date and its masked share, zonal.StandSeries),
// with its harmonic fit and break worked out on the CPU by
// compute/season's float64 reference: one series is microseconds there.
//
// The package exports Main alone: it parses the `canopy gui` flags and
// runs the app. The swipe between two dates is a widget package of its
// own (ui/swipe), as the map is. Inside the package
// the window is built for any fyne.App, which is how the tests drive it
// with fyne.io/fyne/v2/test and no X server. docs/WINDOW.md says more.
package ui
