package vector

// What go-proj does not offer (a CRS's WKT, its EPSG code, whether two
// definitions are the same system) is asked of PROJ directly, each call on
// its own PROJ context.

// #cgo pkg-config: proj
// #include <proj.h>
// #include <stdio.h>
// #include <stdlib.h>
// #include <string.h>
//
// /* canopy_crs describes the CRS def: its WKT (WKT1 as GDAL writes it, or
//    WKT2:2019 for a system WKT1 cannot express) in *wkt (free it), its
//    EPSG code (0 when it has none) in *epsg. Returns 0, or -1 with the
//    reason in err. */
// static int canopy_crs(const char *def, char **wkt, int *epsg, char *err, int errlen) {
// 	PJ_CONTEXT *ctx = proj_context_create();
// 	proj_log_level(ctx, PJ_LOG_NONE);
// 	PJ *pj = proj_create(ctx, def);
// 	*wkt = NULL; *epsg = 0;
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
// 	const char *opts[] = {"MULTILINE=NO", NULL};
// 	const char *w = proj_as_wkt(ctx, pj, PJ_WKT1_GDAL, opts);
// 	if (w == NULL) w = proj_as_wkt(ctx, pj, PJ_WKT2_2019, opts);
// 	if (w != NULL) *wkt = strdup(w);
// 	const char *auth = proj_get_id_auth_name(pj, 0);
// 	const char *code = proj_get_id_code(pj, 0);
// 	if (auth != NULL && code != NULL && strcmp(auth, "EPSG") == 0) {
// 		*epsg = atoi(code);
// 	} else {
// 		int *conf = NULL;
// 		PJ_OBJ_LIST *l = proj_identify(ctx, pj, "EPSG", NULL, &conf);
// 		if (l != NULL && proj_list_get_count(l) > 0 && conf != NULL && conf[0] == 100) {
// 			PJ *m = proj_list_get(ctx, l, 0);
// 			const char *c = m ? proj_get_id_code(m, 0) : NULL;
// 			if (c != NULL) *epsg = atoi(c);
// 			if (m) proj_destroy(m);
// 		}
// 		if (l != NULL) proj_list_destroy(l);
// 		if (conf != NULL) proj_int_list_destroy(conf);
// 	}
// 	proj_destroy(pj);
// 	proj_context_destroy(ctx);
// 	return 0;
// }
//
// /* canopy_crs_same: 1 if a and b are the same system (axis order of
//    geographic systems aside), 0 if not, -1 if either is unknown. */
// static int canopy_crs_same(const char *a, const char *b) {
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
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/paulmach/orb"
	proj "github.com/twpayne/go-proj/v11"

	"canopy/compute"
)

// CRSInfo describes a coordinate reference system given as "EPSG:<code>",
// WKT or a PROJ string: its WKT (WKT1 as GDAL writes it where WKT1 can
// express it) and its EPSG code (0 when PROJ finds none). An unknown
// system is an error.
func CRSInfo(def string) (wkt string, epsg int, err error) {
	if strings.TrimSpace(def) == "" {
		return "", 0, errors.New("no CRS given")
	}
	cdef := C.CString(def)
	defer C.free(unsafe.Pointer(cdef))
	var cwkt *C.char
	var cepsg C.int
	errbuf := make([]byte, 256)
	if C.canopy_crs(cdef, &cwkt, &cepsg, (*C.char)(unsafe.Pointer(&errbuf[0])), C.int(len(errbuf))) != 0 {
		return "", 0, fmt.Errorf("unknown CRS %s: %s", shortCRS(def), C.GoString((*C.char)(unsafe.Pointer(&errbuf[0]))))
	}
	if cwkt != nil {
		wkt = C.GoString(cwkt)
		C.free(unsafe.Pointer(cwkt))
	}
	return wkt, int(cepsg), nil
}

// SameCRS reports whether a and b define the same system (the axis order
// of geographic systems aside). Either being unknown is an error.
func SameCRS(a, b string) (bool, error) {
	if a == b && a != "" {
		return true, nil
	}
	for _, d := range []string{a, b} {
		if _, _, err := CRSInfo(d); err != nil {
			return false, err
		}
	}
	ca, cb := C.CString(a), C.CString(b)
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	return C.canopy_crs_same(ca, cb) == 1, nil
}

// shortCRS shortens a WKT definition for a message.
func shortCRS(def string) string {
	d := strings.Join(strings.Fields(def), " ")
	if len(d) > 60 {
		d = d[:57] + "..."
	}
	return fmt.Sprintf("%q", d)
}

// Reproject transforms every stand of l into the CRS toCRS ("EPSG:<code>",
// WKT, or a PROJ string) in place and sets l.CRS to it. Coordinates are in
// GIS order (easting or longitude first) on both sides. A layer or a target
// without a CRS, an unknown CRS, and points that cannot be transformed
// (outside the projection's domain) are errors; the layer is then left as
// it was.
func Reproject(l *Layer, toCRS string) error {
	if strings.TrimSpace(toCRS) == "" {
		return fmt.Errorf("reproject stands %s: the target (raster) has no CRS", l.source())
	}
	if strings.TrimSpace(l.CRS) == "" {
		return fmt.Errorf("stands %s have no CRS; assign one with ogr2ogr -a_srs EPSG:CODE out.gpkg %s", l.source(), l.Path)
	}
	same, err := SameCRS(l.CRS, toCRS)
	if err != nil {
		return fmt.Errorf("reproject stands %s: %v", l.source(), err)
	}
	if same {
		l.CRS = toCRS
		return nil
	}
	pj, err := proj.NewCRSToCRS(l.CRS, toCRS, nil)
	if err != nil {
		return fmt.Errorf("reproject stands %s from %s to %s: %v", l.source(), shortCRS(l.CRS), shortCRS(toCRS), err)
	}
	norm, err := pj.NormalizeForVisualization()
	if err != nil {
		return fmt.Errorf("reproject stands %s: %v", l.source(), err)
	}
	out := make([]orb.Geometry, len(l.Features))
	var flat []float64
	for i, f := range l.Features {
		g := orb.Clone(f.Geom)
		mp := asMultiPolygon(g)
		for _, p := range mp {
			for _, r := range p {
				flat = flat[:0]
				for _, pt := range r {
					flat = append(flat, pt[0], pt[1])
				}
				if err := norm.ForwardFlatCoords(flat, 2, -1, -1); err != nil {
					return fmt.Errorf("reproject stands %s: feature %d: %v", l.source(), f.FID, err)
				}
				for k := range r {
					x, y := flat[2*k], flat[2*k+1]
					if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
						return fmt.Errorf("reproject stands %s: feature %d: point (%g, %g) cannot be transformed from %s to %s (outside its domain?)", l.source(), f.FID, r[k][0], r[k][1], shortCRS(l.CRS), shortCRS(toCRS))
					}
					r[k] = orb.Point{x, y}
				}
			}
		}
		out[i] = g
	}
	for i := range l.Features {
		l.Features[i].Geom = out[i]
	}
	l.CRS = toCRS
	return nil
}

// RasterCRS returns the CRS of a GeoTIFF's georeferencing as
// "EPSG:<code>", from its ProjectedCSTypeGeoKey or GeographicTypeGeoKey.
// A raster without GeoKeys, or with a user-defined system, is an error.
func RasterCRS(g *compute.GeoRef) (string, error) {
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
