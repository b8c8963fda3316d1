// Package vector reads and writes the stands (forest compartments) that
// Canopy computes zonal statistics for.
//
// Read opens a GeoPackage (one feature table, picked by name when the file
// has several) or a GeoJSON file and returns a Layer: its polygon features
// (FID, attributes, an orb.Polygon or orb.MultiPolygon) and its coordinate
// reference system. GeoPackage tables are read through the pure-Go SQLite
// driver modernc.org/sqlite; their geometry blobs (the GeoPackage binary
// header, then WKB) are decoded with github.com/paulmach/orb. GeoJSON is
// decoded with orb/geojson and is EPSG:4326 (longitude, latitude) unless a
// legacy "crs" member names another system. A shapefile is refused with a
// message that says how to convert it (no maintained Go shapefile module is
// available to the project).
//
// Reproject moves a layer into another CRS (the raster's) with PROJ through
// github.com/twpayne/go-proj, in the traditional GIS axis order (easting or
// longitude first). WriteGPKG writes the stands with extra columns (their
// statistics) as a GeoPackage that GDAL and QGIS open, atomically: a
// temporary file renamed into place.
package vector
