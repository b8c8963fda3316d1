// Package openjp2 is a thin cgo binding to libopenjp2 (OpenJPEG 2.5, the
// JPEG 2000 decoder GDAL uses), for Sentinel-2's band files.
//
// A Decoder reads a JP2 file or a raw J2K codestream from any io.ReaderAt
// (a file, or a member of a zip read in place), through an OpenJPEG stream
// whose read, skip and seek callbacks call back into Go: nothing is copied
// to memory first. Open reads the main header only (size, components,
// precision, tiling, resolution levels). Decode then decodes the whole
// image or a window of it, at full resolution or a reduced level, straight
// into a compute.Plane of the stored type (uint8, uint16, int16 or int32 by
// precision and signedness).
//
// Speed: a tiled image (Sentinel-2 writes 1024² tiles) is decoded tile by
// tile by several workers, each with its own OpenJPEG codec and stream, so
// that every stage runs in parallel (OpenJPEG's own threads parallelise
// code-blocks only, leaving packet parsing and the copy serial); a single
// tile, or a window inside one, is decoded with OpenJPEG's own threads
// (opj_codec_set_threads) and its region decoding (opj_set_decode_area).
//
// Safety: the decoded size is checked against a pixel budget before any
// decoding; decoding is strict, so a truncated codestream is an error
// rather than a partly blank image; libopenjp2's error messages are caught
// by an error handler (nothing is printed) and returned as one-line Go
// errors naming the file.
package openjp2
