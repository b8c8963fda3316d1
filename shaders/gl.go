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
