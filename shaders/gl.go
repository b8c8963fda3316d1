package shaders

import _ "embed" // for the shader sources below

// NDVIComp is the GLSL 4.30 compute shader of the gl backend (ndvi.comp):
// VEC4S vec4s (four pixels each) per invocation from storage buffers bound
// at 0 (red), 1 (nir) and 2 (output), with uniforms count (location 0,
// vec4s to compute), nodataBits (1, uvec2) and hasNodata (2, uvec2). The
// backend defines VEC4S (default 1u) on the line after #version.
//
//go:embed ndvi.comp
var NDVIComp string

// CopyComp is the compute shader the gl backend times as its device-copy
// ceiling (copy.comp): the same layout and VEC4S as NDVIComp, source at
// binding 0, destination at 1, count at location 0.
//
//go:embed copy.comp
var CopyComp string

// IndexCompTmpl is the gl backend's template for index jobs
// (index.comp.tmpl): a Go text/template that compute/glback fills in at
// run time with one storage buffer per band in its stored type (bindings
// 0..), the mask, one buffer holding every output, and each output's
// formula (index.Expr.CExpr); uniforms base (location 0), count (1), stride
// (2) and the bands' nodata and radiometry (8 onwards). The result is a
// GLSL 4.30 compute shader with the same VEC4S, ITERS and LOCAL as
// NDVIComp.
//
//go:embed index.comp.tmpl
var IndexCompTmpl string
