// Package geo places a raster's pixels on the Earth through PROJ: pixel ↔
// map coordinates (the GeoTIFF's geotransform), map coordinates ↔
// latitude and longitude (a PROJ transformation from the raster's CRS to
// EPSG:4326), the CRS's name, units and WKT (for a .prj or a GDAL .aux.xml
// beside a picture), ground distances (in the CRS's unit converted to
// metres for projected systems; geodesics on the CRS's ellipsoid, after
// Karney, for geographic ones) and the direction of true north on the
// pixel grid.
//
// The CRS of a GeoTIFF is the EPSG code of its ProjectedCRSGeoKey or
// GeodeticCRSGeoKey; a user-defined system (its parameters spelled out
// in GeoKeys) is reported as such rather than guessed. Coordinates are in
// GIS order everywhere: easting before northing, longitude before
// latitude in map coordinates (as GeoTIFF and GDAL store them); the
// functions that return latitude and longitude say so in their names and
// results.
//
// PROJ is reached through github.com/twpayne/go-proj for transformations,
// and directly (cgo, pkg-config proj; Debian libproj-dev) for what go-proj
// does not offer: WKT, names, units, ellipsoids, equivalence and
// geodesics. Transformations are built once per CRS and cached; every
// function is safe for concurrent use. On Windows, PROJ's database is the
// proj.db in a folder "proj" beside the executable unless PROJ_DATA names
// another (projdata_windows.go).
package geo
