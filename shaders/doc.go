// Package shaders embeds Canopy's GPU kernel sources and build outputs: the
// OpenGL compute shader ndvi.comp (GLSL 4.30) and the CUDA kernel ndvi.cu
// with its fat binary. One kernel definition per language; each follows
// compute.Pixel exactly (NaN for nodata and for NIR + Red == 0).
package shaders
