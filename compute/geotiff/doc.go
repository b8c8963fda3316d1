// Package geotiff reads and writes GeoTIFF rasters in pure Go.
//
// Reading covers what foresters bring: classic TIFF and BigTIFF in either
// byte order; strips and tiles (edge tiles included); pixel-interleaved and
// band-interleaved (planar) layouts with any number of bands; uint8, int8,
// uint16, int16, uint32, int32, uint64, int64, float32 and float64 samples;
// no compression, LZW, DEFLATE (tag 8 and 32946), PackBits and ZSTD, with
// horizontal (2) and floating-point (3) predictors. Cloud-optimised GeoTIFFs
// are ordinary tiled files to this reader: the first image (full
// resolution) is read, overviews are ignored. Other compressions (JPEG,
// WebP, LERC, JPEG 2000, LZMA, CCITT) are refused with an error naming them.
//
// Open reads and validates the image file directory (IFD) without touching
// pixel data: every offset and byte count is checked against the file length,
// IFD chains are bounded and loops detected, chunk counts must match the
// image geometry, and a file cannot claim more pixels than its compressed
// data could hold, so a hostile file fails fast instead of making the reader
// allocate gigabytes. File.ReadBand then decodes the strips or tiles on all
// cores, each worker converting its chunk straight into the float32 plane.
//
// Georeferencing (ModelPixelScale, ModelTiepoint, ModelTransformation, the
// GeoKey directory and its double and ASCII parameters) is kept verbatim in a
// compute.GeoRef, and GDAL_NODATA becomes the band's nodata value.
//
// Write stores a compute.Band as a single-band float32 GeoTIFF: tiled,
// DEFLATE or ZSTD with the floating-point predictor, BigTIFF when the data
// could pass 4 GiB, with the band's georeferencing tags and GDAL_NODATA.
// WriteBands writes multi-band files of any supported sample type with the
// same machinery.
package geotiff
