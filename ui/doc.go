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
// `canopy gui --stack FILE...` opens a stack of dates (compute/stack) in a
// window of its own (timeseries.go): a date slider over that date's index
// map, and the clicked pixel's series with its harmonic fit and monitoring
// break (compute/season's float64 reference, on the CPU).
//
// The package exports Main alone: it parses the `canopy gui` flags and
// runs the app. The swipe between two dates is a widget package of its
// own (ui/swipe), as the map is. Inside the package
// the window is built for any fyne.App, which is how the tests drive it
// with fyne.io/fyne/v2/test and no X server. docs/WINDOW.md says more.
package ui
