package geo

// #cgo pkg-config: proj
// #include <proj.h>
// #include <geodesic.h>
// #include <stdio.h>
// #include <stdlib.h>
// #include <string.h>
//
// typedef struct {
// 	char *wkt;      /* WKT1 as GDAL writes it, or WKT2:2019 (free it) */
// 	char *esri;     /* WKT1 as ESRI writes it, or NULL (free it) */
// 	char *name;     /* the CRS's name (free it) */
// 	int epsg;       /* EPSG code, 0 when none */
// 	int kind;       /* 1 projected, 2 geographic, 0 another kind */
// 	char unit[64];  /* name of the first axis's unit */
// 	double unit_si; /* the unit in metres (projected) or radians (geographic) */
// 	double a, invf; /* the ellipsoid: semi-major axis (m) and inverse flattening (0: sphere) */
// } canopy_desc;
//
// /* canopy_horizontal returns the horizontal CRS of pj (itself, the first
//    part of a compound CRS, the source of a bound CRS) as a new object. */
// static PJ *canopy_horizontal(PJ_CONTEXT *ctx, PJ *pj) {
// 	switch (proj_get_type(pj)) {
// 	case PJ_TYPE_COMPOUND_CRS: {
// 		PJ *h = proj_crs_get_sub_crs(ctx, pj, 0);
// 		if (h == NULL) return NULL;
// 		PJ *r = canopy_horizontal(ctx, h);
// 		proj_destroy(h);
// 		return r;
// 	}
// 	case PJ_TYPE_BOUND_CRS: {
// 		PJ *s = proj_get_source_crs(ctx, pj);
// 		if (s == NULL) return NULL;
// 		PJ *r = canopy_horizontal(ctx, s);
// 		proj_destroy(s);
// 		return r;
// 	}
// 	default:
// 		return proj_clone(ctx, pj);
// 	}
// }
//
// /* canopy_describe fills d for the CRS def. Returns 0, or -1 with the
//    reason in err. */
// static int canopy_describe(const char *def, canopy_desc *d, char *err, int errlen) {
// 	memset(d, 0, sizeof *d);
// 	PJ_CONTEXT *ctx = proj_context_create();
// 	proj_log_level(ctx, PJ_LOG_NONE);
// 	PJ *pj = proj_create(ctx, def);
// 	if (pj == NULL) {
// 		snprintf(err, errlen, "%s", proj_context_errno_string(ctx, proj_context_errno(ctx)));
// 		proj_context_destroy(ctx);
// 		return -1;
// 	}
// 	if (!proj_is_crs(pj)) {
// 		snprintf(err, errlen, "not a coordinate reference system");
// 		proj_destroy(pj);
// 		proj_context_destroy(ctx);
// 		return -1;
// 	}
// 	/* GDAL writes the axes into WKT1 when the first is not east
// 	   (northing first, latitude first); so do we. */
// 	int axes = 0;
// 	PJ *hz = canopy_horizontal(ctx, pj);
// 	if (hz != NULL) {
// 		PJ *cs0 = proj_crs_get_coordinate_system(ctx, hz);
// 		const char *dir = NULL;
// 		if (cs0 != NULL && proj_cs_get_axis_info(ctx, cs0, 0, NULL, NULL, &dir, NULL, NULL, NULL, NULL) && dir != NULL)
// 			axes = strcmp(dir, "east") != 0;
// 		if (cs0 != NULL) proj_destroy(cs0);
// 		proj_destroy(hz);
// 	}
// 	const char *opts[] = {"MULTILINE=NO", axes ? "OUTPUT_AXIS=YES" : NULL, NULL};
// 	const char *eopts[] = {"MULTILINE=NO", NULL};
// 	const char *w = proj_as_wkt(ctx, pj, PJ_WKT1_GDAL, opts);
// 	if (w == NULL) w = proj_as_wkt(ctx, pj, PJ_WKT2_2019, eopts);
// 	if (w != NULL) d->wkt = strdup(w);
// 	const char *e = proj_as_wkt(ctx, pj, PJ_WKT1_ESRI, eopts);
// 	if (e != NULL) d->esri = strdup(e);
// 	const char *n = proj_get_name(pj);
// 	d->name = strdup(n != NULL ? n : "");
// 	const char *auth = proj_get_id_auth_name(pj, 0);
// 	const char *code = proj_get_id_code(pj, 0);
// 	if (auth != NULL && code != NULL && strcmp(auth, "EPSG") == 0) {
// 		d->epsg = atoi(code);
// 	} else {
// 		int *conf = NULL;
// 		PJ_OBJ_LIST *l = proj_identify(ctx, pj, "EPSG", NULL, &conf);
// 		if (l != NULL && proj_list_get_count(l) > 0 && conf != NULL && conf[0] == 100) {
// 			PJ *m = proj_list_get(ctx, l, 0);
// 			const char *c = m ? proj_get_id_code(m, 0) : NULL;
// 			if (c != NULL) d->epsg = atoi(c);
// 			if (m) proj_destroy(m);
// 		}
// 		if (l != NULL) proj_list_destroy(l);
// 		if (conf != NULL) proj_int_list_destroy(conf);
// 	}
// 	PJ *h = canopy_horizontal(ctx, pj);
// 	if (h != NULL) {
// 		PJ_TYPE t = proj_get_type(h);
// 		if (t == PJ_TYPE_PROJECTED_CRS) d->kind = 1;
// 		if (t == PJ_TYPE_GEOGRAPHIC_2D_CRS || t == PJ_TYPE_GEOGRAPHIC_3D_CRS) d->kind = 2;
// 		PJ *cs = proj_crs_get_coordinate_system(ctx, h);
// 		if (cs != NULL) {
// 			const char *un = NULL;
// 			double f = 0;
// 			if (proj_cs_get_axis_info(ctx, cs, 0, NULL, NULL, NULL, &f, &un, NULL, NULL)) {
// 				d->unit_si = f;
// 				snprintf(d->unit, sizeof d->unit, "%s", un ? un : "");
// 			}
// 			proj_destroy(cs);
// 		}
// 		PJ *ell = proj_get_ellipsoid(ctx, h);
// 		if (ell != NULL) {
// 			double a = 0, b = 0, invf = 0;
// 			int computed = 0;
// 			if (proj_ellipsoid_get_parameters(ctx, ell, &a, &b, &computed, &invf)) {
// 				d->a = a;
// 				d->invf = invf;
// 			}
// 			proj_destroy(ell);
// 		}
// 		proj_destroy(h);
// 	}
// 	proj_destroy(pj);
// 	proj_context_destroy(ctx);
// 	return 0;
// }
//
// static void canopy_desc_free(canopy_desc *d) {
// 	free(d->wkt);
// 	free(d->esri);
// 	free(d->name);
// }
//
// /* canopy_same: 1 if a and b are the same system (axis order of
//    geographic systems aside), 0 if not, -1 if either is unknown. */
// static int canopy_same(const char *a, const char *b) {
// 	PJ_CONTEXT *ctx = proj_context_create();
// 	proj_log_level(ctx, PJ_LOG_NONE);
// 	PJ *pa = proj_create(ctx, a);
// 	PJ *pb = proj_create(ctx, b);
// 	int r = -1;
// 	if (pa != NULL && pb != NULL)
// 		r = proj_is_equivalent_to_with_ctx(ctx, pa, pb, PJ_COMP_EQUIVALENT_EXCEPT_AXIS_ORDER_GEOGCRS);
// 	if (pa) proj_destroy(pa);
// 	if (pb) proj_destroy(pb);
// 	proj_context_destroy(ctx);
// 	return r;
// }
//
// /* canopy_geodesic: the geodesic from (lat1, lon1) to (lat2, lon2), in
//    degrees, on the ellipsoid (a, f): its length in metres, and the
//    azimuth at the start in degrees clockwise from north. */
// static double canopy_geodesic(double a, double f, double lat1, double lon1, double lat2, double lon2, double *azi1) {
// 	struct geod_geodesic g;
// 	double s12 = 0, a1 = 0, a2 = 0;
// 	geod_init(&g, a, f);
// 	geod_inverse(&g, lat1, lon1, lat2, lon2, &s12, &a1, &a2);
// 	*azi1 = a1;
// 	return s12;
// }
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"canopy/compute"
)

// CRS describes a coordinate reference system as PROJ knows it.
type CRS struct {
	// Def is the definition it was made from ("EPSG:32633", WKT, a PROJ
	// string).
	Def string
	// EPSG is its EPSG code, 0 when PROJ finds none.
	EPSG int
	// Name is PROJ's name for it: "WGS 84 / UTM zone 33N".
	Name string
	// Projected and Geographic tell its kind (of the horizontal part of a
	// compound system); both are false for other kinds (geocentric,
	// engineering).
	Projected, Geographic bool
	// Unit names the unit of its first axis ("metre", "US survey foot",
	// "degree").
	Unit string
	// UnitSI is that unit in metres (projected) or radians (geographic).
	UnitSI float64
	// WKT is its WKT: WKT1 as GDAL writes it where WKT1 can express the
	// system, else WKT2:2019. ESRIWKT is WKT1 as ESRI writes it (for a
	// .prj), "" when PROJ cannot write it.
	WKT, ESRIWKT string
	// A and InvF are its ellipsoid's semi-major axis in metres and inverse
	// flattening (0 for a sphere); A is 0 when unknown.
	A, InvF float64
}

// Label names the system for a map or a read-out: "EPSG:32633 · WGS 84 /
// UTM zone 33N", or the name alone when it has no code.
func (c CRS) Label() string {
	switch {
	case c.EPSG != 0 && c.Name != "":
		return fmt.Sprintf("EPSG:%d · %s", c.EPSG, c.Name)
	case c.EPSG != 0:
		return fmt.Sprintf("EPSG:%d", c.EPSG)
	}
	return c.Name
}

// MetresPerUnit returns the length of one map unit in metres for a
// projected system, and false for any other (a geographic system's
// degree has no fixed ground length).
func (c CRS) MetresPerUnit() (float64, bool) {
	if c.Projected && c.UnitSI > 0 {
		return c.UnitSI, true
	}
	return 0, false
}

var describeCache sync.Map // def -> describeResult

type describeResult struct {
	crs CRS
	err error
}

// Describe returns what PROJ knows of the system def ("EPSG:<code>",
// WKT or a PROJ string). An unknown system is an error. Results are
// cached.
func Describe(def string) (CRS, error) {
	if strings.TrimSpace(def) == "" {
		return CRS{}, errors.New("no CRS given")
	}
	if r, ok := describeCache.Load(def); ok {
		return r.(describeResult).crs, r.(describeResult).err
	}
	cdef := C.CString(def)
	defer C.free(unsafe.Pointer(cdef))
	var d C.canopy_desc
	errbuf := make([]byte, 256)
	if C.canopy_describe(cdef, &d, (*C.char)(unsafe.Pointer(&errbuf[0])), C.int(len(errbuf))) != 0 {
		err := fmt.Errorf("unknown CRS %s: %s", shortDef(def), C.GoString((*C.char)(unsafe.Pointer(&errbuf[0]))))
		describeCache.Store(def, describeResult{err: err})
		return CRS{}, err
	}
	defer C.canopy_desc_free(&d)
	c := CRS{Def: def, EPSG: int(d.epsg), Projected: d.kind == 1, Geographic: d.kind == 2,
		Unit: C.GoString(&d.unit[0]), UnitSI: float64(d.unit_si), A: float64(d.a), InvF: float64(d.invf)}
	if d.wkt != nil {
		c.WKT = C.GoString(d.wkt)
	}
	if d.esri != nil {
		c.ESRIWKT = C.GoString(d.esri)
	}
	if d.name != nil {
		c.Name = C.GoString(d.name)
	}
	describeCache.Store(def, describeResult{crs: c})
	return c, nil
}

// Info returns the WKT of the system def (WKT1 as GDAL writes it where
// WKT1 can express it, else WKT2:2019) and its EPSG code (0 when PROJ
// finds none). An unknown system is an error.
func Info(def string) (wkt string, epsg int, err error) {
	c, err := Describe(def)
	return c.WKT, c.EPSG, err
}

// Same reports whether a and b define the same system (the axis order of
// geographic systems aside). Either being unknown is an error.
func Same(a, b string) (bool, error) {
	if a == b && a != "" {
		return true, nil
	}
	for _, d := range []string{a, b} {
		if _, err := Describe(d); err != nil {
			return false, err
		}
	}
	ca, cb := C.CString(a), C.CString(b)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	return C.canopy_same(ca, cb) == 1, nil
}

// shortDef shortens a definition for a message.
func shortDef(def string) string {
	d := strings.Join(strings.Fields(def), " ")
	if len(d) > 60 {
		d = d[:57] + "..."
	}
	return fmt.Sprintf("%q", d)
}

// Definition returns the CRS of a GeoTIFF's georeferencing as
// "EPSG:<code>", from its ProjectedCRSGeoKey or GeodeticCRSGeoKey. A
// raster without GeoKeys, or with a user-defined system, is an error that
// says how to give it a code.
func Definition(g *compute.GeoRef) (string, error) {
	if g == nil || len(g.GeoKeyDirectory) < 4 {
		return "", errors.New("the raster has no GeoKeys (no CRS)")
	}
	d := g.GeoKeyDirectory
	n := int(d[3])
	keys := map[uint16]uint16{}
	for i := 0; i < n && 4+4*i+3 < len(d); i++ {
		e := d[4+4*i : 8+4*i]
		if e[1] == 0 && e[2] == 1 {
			keys[e[0]] = e[3]
		}
	}
	const (
		modelType     = 1024
		geographicKey = 2048
		projectedKey  = 3072
		userDefined   = 32767
	)
	model := keys[modelType]
	switch {
	case model != 2 && keys[projectedKey] != 0:
		if c := keys[projectedKey]; c != userDefined {
			return fmt.Sprintf("EPSG:%d", c), nil
		}
		return "", errors.New("the raster's projection is user-defined in its GeoKeys, not an EPSG code; reproject it with gdalwarp -t_srs EPSG:CODE")
	case keys[geographicKey] != 0:
		if c := keys[geographicKey]; c != userDefined {
			return fmt.Sprintf("EPSG:%d", c), nil
		}
		return "", errors.New("the raster's geographic system is user-defined in its GeoKeys, not an EPSG code; reproject it with gdalwarp -t_srs EPSG:CODE")
	}
	return "", errors.New("the raster's GeoKeys name no EPSG system (no CRS)")
}

// Of describes the CRS of a raster's georeferencing (Definition, then
// Describe).
func Of(g *compute.GeoRef) (CRS, error) {
	def, err := Definition(g)
	if err != nil {
		return CRS{}, err
	}
	return Describe(def)
}

// WKT returns the WKT of a raster's CRS: WKT1 as GDAL writes it (what
// gdalsrsinfo -o wkt1 prints, on one line), or WKT2:2019 for a system
// WKT1 cannot express.
func WKT(g *compute.GeoRef) (string, error) {
	c, err := Of(g)
	if err != nil {
		return "", err
	}
	if c.WKT == "" {
		return "", fmt.Errorf("PROJ cannot write %s as WKT", c.Label())
	}
	return c.WKT, nil
}

// ESRIWKT returns the WKT of a raster's CRS as ESRI writes it, the
// content of a .prj file (what gdalsrsinfo -o wkt_esri prints, on one
// line).
func ESRIWKT(g *compute.GeoRef) (string, error) {
	c, err := Of(g)
	if err != nil {
		return "", err
	}
	if c.ESRIWKT == "" {
		return "", fmt.Errorf("PROJ cannot write %s as ESRI WKT", c.Label())
	}
	return c.ESRIWKT, nil
}

// Geodesic returns the length in metres of the shortest path on the
// ellipsoid of c (WGS 84's when unknown) between two points given by
// latitude and longitude in degrees, and its azimuth at the first point
// in degrees clockwise from north (Karney's algorithm, PROJ's geodesic.h).
func (c CRS) Geodesic(lat1, lon1, lat2, lon2 float64) (metres, azimuth float64) {
	a, f := c.ellipsoid()
	var az C.double
	s := C.canopy_geodesic(C.double(a), C.double(f), C.double(lat1), C.double(lon1), C.double(lat2), C.double(lon2), &az)
	return float64(s), float64(az)
}
