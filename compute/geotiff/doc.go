// Package geotiff reads and writes GeoTIFF rasters in Go (libdeflate
// through cgo where it is linked in).
//
// Reading covers what foresters bring: classic TIFF and BigTIFF in either
// byte order; strips and tiles (edge tiles included); pixel-interleaved and
// band-interleaved (planar) layouts with any number of bands; uint8, int8,
// uint16, int16, uint32, int32, uint64, int64, float32 and float64 samples;
// no compression, LZW, DEFLATE (tag 8 and 32946), PackBits and ZSTD, with
// horizontal (2) and floating-point (3) predictors. Cloud-optimised GeoTIFFs
// are ordinary tiled files to this reader: the first image (full
// resolution) is what Open reads; File.Overviews gives the internal
// overviews as images of their own. Other compressions (JPEG,
// WebP, LERC, JPEG 2000, LZMA, CCITT) are refused with an error naming them.
//
// Open reads and validates the image file directory (IFD) without touching
// pixel data, and opens regular files only (a FIFO, device or directory is
// an error at once, never a wait). Every offset and byte count is checked
// against the file length, IFD chains are bounded and loops detected,
// chunk counts must match the image geometry, and the work a file asks
// for must be what its data can honestly need: the image cannot claim
// more pixels than its compressed bytes could hold, with every byte of the
// file counted once however many strips or tiles point at it; decoding
// each distinct chunk once down to the last row the image shows must stay
// within the same bound and within a small multiple of the image's own
// samples. So a 40 KB file cannot make the reader allocate gigabytes, and
// a 1×1 image in one huge tile costs a row, not a tile. Errors say what is
// wrong in a user's words first ("the file ends early; it may be
// incomplete"), the technical detail after, on one line of bounded length.
//
// File.ReadBands decodes on all cores, as many workers as a 256 MiB
// working-memory budget allows, each decoding its chunks row by row
// straight into the float32 planes. Chunks that share the very same bytes
// are decoded once and copied. Decoding stops with an error past a time
// budget (10 s plus 1 s per 16 MiB to decode) that honest files never
// reach. DEFLATE strips and tiles are inflated whole with libdeflate (cgo,
// native/deflate) where it is linked in. File.ReadRowsBandsInto reads a
// window of rows at the bands' stored type (compute.Plane), the block
// pipeline's way in.
//
// A reader given to NewReader that implements Prefetcher (a file read over
// HTTP, compute/remote) is told the byte ranges of every strip or tile a
// read needs before they are decoded, so that it fetches them together.
//
// Georeferencing (ModelPixelScale, ModelTiepoint, ModelTransformation, the
// GeoKey directory and its double and ASCII parameters) is kept verbatim in a
// compute.GeoRef, and GDAL_NODATA becomes the band's nodata value.
//
// Write stores a compute.Band as a single-band float32 GeoTIFF: tiled,
// DEFLATE or ZSTD with the floating-point predictor, BigTIFF when the data
// could pass 4 GiB, with the band's georeferencing tags and GDAL_NODATA.
// WriteBands writes multi-band files of any supported sample type with the
// same machinery. NewCOG streams float32 rows into a Cloud Optimized
// GeoTIFF with internal overviews.
package geotiff
