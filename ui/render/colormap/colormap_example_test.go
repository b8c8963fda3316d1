package colormap_test

import (
	"fmt"
	"image"
	"math"

	"canopy/compute"
	"canopy/ui/render/colormap"
)

// A LUT maps NDVI values to colours; NaN (no data) is transparent.
func ExampleNew() {
	lut, err := colormap.New(colormap.RampRdYlGn, -1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range []float32{-1, 0, 1, float32(math.NaN())} {
		fmt.Printf("%5.1f %v\n", v, lut.Color(v))
	}
	// Output:
	//  -1.0 {165 0 38 255}
	//   0.0 {255 255 191 255}
	//   1.0 {0 104 55 255}
	//   NaN {0 0 0 0}
}

// The class table is shared by the classes ramp and the statistics.
func ExampleClasses() {
	for _, c := range colormap.Classes() {
		fmt.Printf("%-12s %s\n", c.Name, c.Bounds())
	}
	fmt.Println(colormap.Classes()[colormap.ClassOf(0.45)].Name)
	// Output:
	// no vegetation < 0
	// bare         0 – 0.2
	// sparse       0.2 – 0.4
	// moderate     0.4 – 0.6
	// dense        ≥ 0.6
	// moderate
}

// RenderView fills a screen-sized image with part of the map; ViewPixel
// tells which image pixel a screen pixel shows.
func ExampleLUT_RenderView() {
	const w, h = 4, 2
	ndvi := []float32{
		-1, 0, 0.5, 1,
		0.2, 0.4, 0.6, float32(math.NaN()),
	}
	lut, _ := colormap.New(colormap.RampClasses, 0, 0)
	view := image.NewNRGBA(image.Rect(0, 0, 6, 4))
	// Image point (1, 0) at the top-left corner, 2 screen pixels per pixel.
	lut.RenderView(view, ndvi, w, h, 1, 0, 2)
	ix, iy := colormap.ViewPixel(5, 3, 1, 0, 2)
	fmt.Println("screen (5,3) shows image pixel", ix, iy, view.NRGBAAt(5, 3))
	fmt.Println("screen (0,0) shows image pixel (1,0)", view.NRGBAAt(0, 0) == colormap.Classes()[1].Color)
	// Output:
	// screen (5,3) shows image pixel 3 1 {0 0 0 0}
	// screen (0,0) shows image pixel (1,0) true
}

// A world file places the exported PNG in a GIS: the centre of the
// top-left pixel, not its corner.
func ExampleWorldFile() {
	geo := &compute.GeoRef{PixelScale: []float64{10, 10, 0}, Tiepoints: []float64{0, 0, 0, 600000, 5200000, 0}}
	wf, _ := colormap.WorldFile(geo)
	fmt.Print(wf)
	// Output:
	// 10
	// 0
	// 0
	// -10
	// 600005
	// 5199995
}

// A min/max stretch spreads a ramp over the values present.
func ExampleStretchFor() {
	ndvi := []float32{0.1, 0.35, float32(math.NaN()), 0.6}
	s, _ := colormap.StretchFor(colormap.StretchMinMax, ndvi)
	fmt.Printf("[%.2f, %.2f]\n", s.Lo, s.Hi)
	// Output:
	// [0.10, 0.60]
}
