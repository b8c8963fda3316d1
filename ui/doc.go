// Package ui is Canopy's desktop app, built with Fyne: the window foresters
// open to look at NDVI maps and at what each backend costs.
//
// The split follows Jacalz/rymdport: this package builds widgets and never
// does the work itself. Loading bands, computing NDVI, colouring, statistics
// and charts all come from package compute and its sub-packages, the same
// functions the command line calls. Long work (loading, computing, comparing
// backends, size sweeps) runs in a goroutine through a small bridge that
// cancels superseded jobs and brings results back to the event goroutine
// with fyne.Do, so the window never freezes.
//
// The map is a custom widget (MapView) whose raster renders only the visible
// viewport at screen resolution through colormap's RenderView, so a
// 10980×10980 scene is held once as float32 (red, NIR, NDVI) and never as a
// full-size RGBA picture.
//
// Main parses the `canopy gui` flags and runs the app; NewWindow builds the
// window for any fyne.App, which is how the tests drive it with
// fyne.io/fyne/v2/test and no X server.
package ui
