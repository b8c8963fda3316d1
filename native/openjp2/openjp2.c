#include <string.h>
#include "openjp2.h"
#include "_cgo_export.h"

static OPJ_SIZE_T rd(void *buf, OPJ_SIZE_T n, void *user) {
	return (OPJ_SIZE_T)canopyOpjRead(buf, (size_t)n, (uintptr_t)((canopy_opj *)user)->handle);
}

static OPJ_OFF_T skip(OPJ_OFF_T n, void *user) {
	return (OPJ_OFF_T)canopyOpjSkip((int64_t)n, (uintptr_t)((canopy_opj *)user)->handle);
}

static OPJ_BOOL seek(OPJ_OFF_T n, void *user) {
	return (OPJ_BOOL)canopyOpjSeek((int64_t)n, (uintptr_t)((canopy_opj *)user)->handle);
}

/* Keep the first error: libopenjp2 reports the cause first, then the
 * callers that gave up because of it. */
static void on_error(const char *msg, void *user) {
	canopy_opj *o = user;
	if (o->err[0] != 0 || msg == NULL)
		return;
	strncpy(o->err, msg, sizeof o->err - 1);
	o->err[sizeof o->err - 1] = 0;
	size_t n = strlen(o->err);
	while (n > 0 && (o->err[n - 1] == '\n' || o->err[n - 1] == '\r' || o->err[n - 1] == ' '))
		o->err[--n] = 0;
	for (size_t i = 0; i < n; i++)
		if (o->err[i] == '\n' || o->err[i] == '\r')
			o->err[i] = ' ';
}

static void quiet(const char *msg, void *user) {
	(void)msg;
	(void)user;
}

static void fail(canopy_opj *o, const char *what) {
	if (o->err[0] == 0) {
		strncpy(o->err, what, sizeof o->err - 1);
		o->err[sizeof o->err - 1] = 0;
	}
}

int canopy_opj_open(canopy_opj *o, int format, int threads, int reduce) {
	opj_dparameters_t p;
	o->stream = opj_stream_create(1 << 20, OPJ_TRUE);
	if (o->stream == NULL) {
		fail(o, "cannot create a stream");
		return -1;
	}
	opj_stream_set_user_data(o->stream, o, NULL);
	opj_stream_set_user_data_length(o->stream, o->size);
	opj_stream_set_read_function(o->stream, rd);
	opj_stream_set_skip_function(o->stream, skip);
	opj_stream_set_seek_function(o->stream, seek);

	o->codec = opj_create_decompress((OPJ_CODEC_FORMAT)format);
	if (o->codec == NULL) {
		fail(o, "cannot create a decoder");
		return -1;
	}
	opj_set_error_handler(o->codec, on_error, o);
	opj_set_warning_handler(o->codec, quiet, o);
	opj_set_info_handler(o->codec, quiet, o);
	opj_set_default_decoder_parameters(&p);
	if (!opj_setup_decoder(o->codec, &p)) {
		fail(o, "cannot set up the decoder");
		return -1;
	}
	/* A truncated codestream is an error, not a blurred image. */
	opj_decoder_set_strict_mode(o->codec, OPJ_TRUE);
	if (threads > 1 && opj_has_thread_support())
		opj_codec_set_threads(o->codec, threads);
	if (!opj_read_header(o->stream, o->codec, &o->image) || o->image == NULL) {
		fail(o, "cannot read the header");
		return -1;
	}
	if (reduce > 0 && !opj_set_decoded_resolution_factor(o->codec, (OPJ_UINT32)reduce)) {
		fail(o, "cannot set the resolution level");
		return -1;
	}
	return 0;
}

void canopy_opj_info_get(canopy_opj *o, canopy_opj_info *out) {
	opj_image_t *im = o->image;
	memset(out, 0, sizeof *out);
	out->x0 = im->x0;
	out->y0 = im->y0;
	out->x1 = im->x1;
	out->y1 = im->y1;
	out->ncomps = im->numcomps;
	out->same = 1;
	if (im->numcomps > 0) {
		out->prec = im->comps[0].prec;
		out->sgnd = im->comps[0].sgnd;
		out->dx = im->comps[0].dx;
		out->dy = im->comps[0].dy;
		for (OPJ_UINT32 i = 1; i < im->numcomps; i++)
			if (im->comps[i].prec != out->prec || im->comps[i].sgnd != out->sgnd ||
			    im->comps[i].dx != out->dx || im->comps[i].dy != out->dy)
				out->same = 0;
	}
	opj_codestream_info_v2_t *ci = opj_get_cstr_info(o->codec);
	if (ci != NULL) {
		out->tx0 = ci->tx0;
		out->ty0 = ci->ty0;
		out->tdx = ci->tdx;
		out->tdy = ci->tdy;
		out->tw = ci->tw;
		out->th = ci->th;
		out->mct = ci->m_default_tile_info.mct;
		if (ci->m_default_tile_info.tccp_info != NULL && ci->nbcomps > 0)
			out->levels = ci->m_default_tile_info.tccp_info[0].numresolutions;
		opj_destroy_cstr_info(&ci);
	}
}

int canopy_opj_decode_area(canopy_opj *o, int x0, int y0, int x1, int y1) {
	if (!opj_set_decode_area(o->codec, o->image, x0, y0, x1, y1)) {
		fail(o, "cannot set the decode area");
		return -1;
	}
	if (!opj_decode(o->codec, o->stream, o->image)) {
		fail(o, "decoding failed");
		return -1;
	}
	return 0;
}

int canopy_opj_decode_tile(canopy_opj *o, uint32_t t) {
	if (!opj_get_decoded_tile(o->codec, o->stream, o->image, t)) {
		fail(o, "decoding a tile failed");
		return -1;
	}
	return 0;
}

int canopy_opj_comp(canopy_opj *o, uint32_t c, uint32_t *w, uint32_t *h) {
	if (o->image == NULL || c >= o->image->numcomps || o->image->comps[c].data == NULL) {
		fail(o, "the decoder returned no samples");
		return -1;
	}
	*w = o->image->comps[c].w;
	*h = o->image->comps[c].h;
	return 0;
}

void canopy_opj_copy(canopy_opj *o, uint32_t c, uint32_t sx, uint32_t sy, uint32_t w, uint32_t h,
	void *dst, size_t dstride, int size) {
	const opj_image_comp_t *cp = &o->image->comps[c];
	for (uint32_t y = 0; y < h; y++) {
		const OPJ_INT32 *s = cp->data + (size_t)(sy + y) * cp->w + sx;
		switch (size) {
		case 1: {
			uint8_t *d = (uint8_t *)dst + (size_t)y * dstride;
			for (uint32_t x = 0; x < w; x++)
				d[x] = (uint8_t)s[x];
			break;
		}
		case 2: {
			uint16_t *d = (uint16_t *)dst + (size_t)y * dstride;
			for (uint32_t x = 0; x < w; x++)
				d[x] = (uint16_t)s[x];
			break;
		}
		default: {
			int32_t *d = (int32_t *)dst + (size_t)y * dstride;
			memcpy(d, s, (size_t)w * 4);
		}
		}
	}
}

void canopy_opj_close(canopy_opj *o) {
	if (o->image != NULL)
		opj_image_destroy(o->image);
	if (o->codec != NULL)
		opj_destroy_codec(o->codec);
	if (o->stream != NULL)
		opj_stream_destroy(o->stream);
	o->image = NULL;
	o->codec = NULL;
	o->stream = NULL;
}
