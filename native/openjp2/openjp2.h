#ifndef CANOPY_OPENJP2_H
#define CANOPY_OPENJP2_H

#include <stdint.h>
#include <stddef.h>
#include <openjpeg.h>

/* One open codestream: a stream whose reads call back into Go (handle is
 * the Go side's cgo.Handle), a codec whose messages land in err, and the
 * header image. */
typedef struct {
	uintptr_t handle;
	uint64_t size;
	opj_codec_t *codec;
	opj_stream_t *stream;
	opj_image_t *image;
	char err[320];
} canopy_opj;

/* Header facts. */
typedef struct {
	uint32_t x0, y0, x1, y1;      /* image area on the reference grid */
	uint32_t ncomps;
	uint32_t prec, sgnd, dx, dy;  /* of component 0 */
	uint32_t tx0, ty0, tdx, tdy, tw, th;
	uint32_t levels;
	uint32_t same;                /* 1 when every component has component 0's layout */
	uint32_t mct;
} canopy_opj_info;

/* canopy_opj_open makes the stream and codec (format OPJ_CODEC_JP2 or
 * OPJ_CODEC_J2K), reads the main header and sets the resolution factor.
 * Returns 0 on success; on failure o->err says why. */
int canopy_opj_open(canopy_opj *o, int format, int threads, int reduce);
void canopy_opj_info_get(canopy_opj *o, canopy_opj_info *out);
/* canopy_opj_decode_area decodes the area (reference grid) into o->image. */
int canopy_opj_decode_area(canopy_opj *o, int x0, int y0, int x1, int y1);
/* canopy_opj_decode_tile decodes tile t into o->image. */
int canopy_opj_decode_tile(canopy_opj *o, uint32_t t);
/* canopy_opj_comp reports component c of o->image: size and data. */
int canopy_opj_comp(canopy_opj *o, uint32_t c, uint32_t *w, uint32_t *h);
/* canopy_opj_copy copies a w×h block at (sx, sy) of component c into dst
 * (samples of size bytes, dstride samples a row). */
void canopy_opj_copy(canopy_opj *o, uint32_t c, uint32_t sx, uint32_t sy, uint32_t w, uint32_t h,
	void *dst, size_t dstride, int size);
void canopy_opj_close(canopy_opj *o);

#endif
