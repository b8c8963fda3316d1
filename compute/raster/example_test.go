package raster_test

import (
	"fmt"

	"canopy/compute/raster"
)

func ExampleParseSpec() {
	for _, spec := range []string{"B04.tif", "scene.tif:4", `C:\data\scene.tif:3`, "runs:2024/red.tif"} {
		path, band, err := raster.ParseSpec(spec)
		fmt.Println(path, band, err)
	}
	// Output:
	// B04.tif 0 <nil>
	// scene.tif 4 <nil>
	// C:\data\scene.tif 3 <nil>
	// runs:2024/red.tif 0 <nil>
}
