// Package layout draws print-quality maps: the coloured index map with its
// title, legend, scale bar, north arrow, coordinate grid, CRS, date and
// source, at a size in pixels or on a paper size at a resolution, written
// as PNG, PDF or SVG from one drawing; and the map alone as a PNG whose
// world file (.pgw), .prj and GDAL .aux.xml place its pixels exactly.
//
// # Geometry
//
// Everything is laid out in pixels at the chosen resolution (Options.DPI;
// a pixel is 1/DPI inch on paper), so that Plan, Render, the PDF and the
// SVG agree: the map frame, the legend, the scale bar and the north arrow
// fall on whole pixels, the map is drawn at its frame's size in pixels
// (colormap's RenderView: nearest neighbour when enlarged, a 3×3 mean of
// samples when reduced), and the PDF and the SVG embed that raster, so
// that the printed map has the full resolution of the DPI asked for. Text
// sizes are points scaled with the page (a poster's title is bigger than
// a postcard's); fonts are Liberation Sans everywhere (embedded in the
// PDF).
//
// # Furniture
//
//   - The legend comes from the map's LUT: a colour bar with ticks on
//     round values for a continuous ramp, or the classes with their names,
//     bounds and the map's own colours, and a "no data" swatch.
//   - The scale bar has a round length (1, 2 or 5 × 10^k metres: 100 m,
//     500 m, 1 km, 2 km, 5 km…) of at most about 40% of the map's width,
//     measured at the map's centre by compute/geo: map units converted to
//     metres in projected systems, geodesic lengths in geographic ones
//     (where the bar says at which latitude it holds).
//   - The north arrow points to true north at the map's centre (the grid
//     convergence of a projected system, a rotated geotransform).
//   - The optional grid draws map coordinates at round intervals with
//     labels outside the frame (north-up rasters).
//   - The footer names the CRS (EPSG code and PROJ's name), the date and
//     the source.
//
// What cannot be drawn honestly is left out and said in Geometry.Notes:
// no scale bar or north arrow for a raster without georeferencing, a
// scale bar in map units for a CRS that PROJ does not know.
package layout
