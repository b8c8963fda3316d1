// Package shaders embeds Canopy's GPU kernel sources: the OpenGL compute
// shader template of the gl backend's index jobs (index.comp.tmpl, GLSL
// 4.30, filled in per job from the compiled index program) and the copy
// shader it measures its device-copy ceiling with (copy.comp). The cuda
// backend generates its PTX in compute/cudaback.
package shaders
