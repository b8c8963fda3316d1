// Package deflate is a thin cgo binding to libdeflate (Debian
// libdeflate-dev), the whole-buffer DEFLATE codec libtiff and GDAL use
// where it is available: it compresses and decompresses a whole strip or
// tile in one call, several times faster than a streaming zlib.
//
// A Compressor writes zlib streams (RFC 1950, as TIFF's DEFLATE
// compression stores them) at levels 1 to 12; a Decompressor inflates raw
// DEFLATE data (the zlib header skipped and the trailing Adler-32 not
// checked by the caller, as libtiff reads TIFF chunks) into a buffer of
// the size the caller expects. Neither is safe for concurrent use: give
// each goroutine its own. Neither keeps a pointer to the buffers it is
// given.
//
// Without cgo (CGO_ENABLED=0) Available is false and the constructors
// return an error; callers then use a pure-Go codec.
package deflate
