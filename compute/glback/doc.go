// Package glback is Canopy's gl backend: any index job (RunJob, NDVI one
// of them) in an OpenGL 4.3 compute shader generated from the job's program
// (shaders/index.comp.tmpl, compiled by the driver and cached), on a
// headless EGL context (native/egl), so the same code serves the command
// line, CI on Mesa's llvmpipe and the desktop app beside Fyne's own GL
// context. Importing the package registers the backend as compute.NameGL.
// docs/GL.md describes the generated shaders.
//
// # Threads
//
// An OpenGL context is current on one OS thread, and GL calls made from any
// other thread fail silently. Each Backend therefore starts one goroutine
// that locks its OS thread, creates the context there and owns it for its
// whole life; every piece of GL work is sent to it through a channel and
// checks first that its context is still current. Callers on any goroutine
// are serialised: a job is never interleaved with another.
//
// # Buffers and phases
//
// A job's device planes (its bands, the mask, its outputs) are allocated
// for the first job of a layout and reused while the layout stays the
// same, each kept in buffers of at most 128 MB (CANOPY_GL_PART_MB) that
// every dispatch and transfer walks part by part. On a GPU whose GL driver imports external memory and whose CUDA
// driver has the same device, the planes are CUDA allocations (cuMemCreate,
// 2 MiB pages) imported through GL_EXT_memory_object_fd: NVIDIA's own GL
// buffers use 64 KiB pages, which halve the bandwidth of a shader that
// streams through more than a few hundred MB. Elsewhere they are
// glBufferStorage buffers (CANOPY_GL_MEMORY picks either).
//
// Bands and outputs move in the "mapped" mode
// through two rings of persistently mapped staging buffers (one written by
// the host, one read by it) of four 32 MiB slots each, allocated once:
// upload copies a slice of a band into a free slot with all cores
// (streaming stores) while the GPU copies the previous slot into the device
// plane (glCopyBufferSubData, fenced); download runs the same pipeline the
// other way. The "subdata" mode uses glBufferSubData and glGetBufferSubData
// instead and leaves the staging to the driver. "mapped" is the default on
// a GPU; "subdata" on a software renderer (llvmpipe), whose "device" memory
// is host memory, so that staging would only add a copy.
//
// Upload, kernel and download are timed separately. The kernel is bracketed
// by a GL_TIMESTAMP query pair and, independently, by the wall clock from
// before the dispatch to the end of glFinish; the timer is used when it
// reads within the wall clock, else the wall clock (LastKernelClocks gives
// both). Context creation, shader compilation, buffer allocation and one
// warm-up dispatch per layout are Setup, reported apart. Ceilings times a
// copy shader (shaders/copy.comp) that walks memory as the job shaders
// do, and glCopyBufferSubData, which may run on a slower copy engine, and
// reports the faster as the device copy.
//
// # Job streams
//
// StreamJobs (compute.JobStreamer) takes the block pipeline's blocks as a
// stream (stream.go): each block in flight has a slot of device buffers, a
// mapped buffer its outputs come back to, timestamp queries and a fence;
// Submit queues a block's upload, shader and download and returns, Wait
// waits for the oldest block's fence. GL runs one queue per context, so
// the host's copies overlap the GPU's work, and two blocks in flight are
// enough (StreamDepthHint).
//
// # Kept on the card
//
// OpenResident (compute.Resident) keeps a scene's bands on the device,
// uploaded once as stored, in buffers of the session's own; its Index runs
// the generated job shader into planes that stay there (division and
// square root correctly rounded, so the planes equal the CPU's bit for
// bit), Stats is one fused pass whose per-work-group records come back,
// Render draws the screen view in a compute shader and only its RGBA comes
// back, Probe reads one pixel of each plane, Download a whole plane
// (resident.go; docs/GL.md).
//
// # Season models
//
// RunSeries (season.Runner) runs compute/season's per-pixel models over a
// stack of dates in a compute shader generated per plan (season_glsl.go,
// the algorithm of cudaback's kernels, the dates' tables in a uniform
// buffer), one invocation a pixel; OpenCube keeps a block on the card and
// runs any model of its dates without uploading again. The cube and its
// outputs live where the planes do: in CUDA allocations, the values copied
// up by the CUDA driver from the caller's page-locked memory, where that
// works; else in glBufferStorage buffers written with glBufferSubData.
//
// # Display selection
//
// The context comes from native/egl: a hardware EGL device first (the
// NVIDIA driver exposes one with no X server), then Mesa's software device,
// then Mesa's surfaceless platform. The environment variable CANOPY_EGL
// (any, hardware, software, surfaceless) restricts the choice.
package glback
