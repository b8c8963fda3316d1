package shaders

import _ "embed" // for the shader sources below

// NDVIComp is the GLSL 4.30 compute shader of the gl backend (ndvi.comp):
// four pixels per invocation from vec4 storage buffers bound at 0 (red), 1
// (nir) and 2 (output), with uniforms count (location 0, vec4s to compute),
// nodataBits (1, uvec2) and hasNodata (2, uvec2).
//
//go:embed ndvi.comp
var NDVIComp string
