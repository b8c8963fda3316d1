package shaders

import _ "embed" // for the shader sources below

// CopyComp is the compute shader the gl backend times as its device-copy
// ceiling (copy.comp): VEC4S vec4s (four pixels each) per invocation, ITERS
// spans per work group of LOCAL invocations (the backend defines the three
// on the line after #version), source at binding 0, destination at 1,
// count (vec4s to copy) at location 0.
//
//go:embed copy.comp
var CopyComp string

// IndexCompTmpl is the gl backend's template for index jobs
// (index.comp.tmpl): a Go text/template that compute/glback fills in at
// run time with one storage buffer per band in its stored type (bindings
// 0..), the mask, one buffer holding every output, and each output's
// formula (index.Expr.CExpr); uniforms base (location 0), count (1), stride
// (2) and the bands' nodata and radiometry (8 onwards). The result is a
// GLSL 4.30 compute shader; the backend defines VEC4S, ITERS and LOCAL
// as for CopyComp.
//
//go:embed index.comp.tmpl
var IndexCompTmpl string
