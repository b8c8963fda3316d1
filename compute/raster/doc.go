// Package raster loads the bands Canopy computes from and writes its
// results. It is what the command line and the GUI call: a band is named by
// a spec "FILE" or "FILE:B" (B counted from 1, as GDAL counts bands), the
// file's content decides how it is read (GeoTIFF through package geotiff,
// or an 8/16-bit grayscale PNG without georeferencing), and results are
// written as GeoTIFF through package outfile (a temporary file renamed into
// place; links, devices and inputs never replaced). Inputs are regular
// files only, and what a load will cost is known before it starts
// (Estimate, EstimatePair): PNG bands are limited to PNGMemory.
package raster
