// Package cudaback is the `cuda` backend: any index job (NDVI one of them)
// as a kernel generated in PTX from the job's program (ptx.go), compiled by
// the driver's JIT and cached, run through the CUDA driver API, which
// native/cuda loads at run time, so that Canopy builds and runs without the
// CUDA toolkit and says why when there is no driver or GPU. Importing the
// package registers the backend with compute.
//
// The image starts and ends in ordinary Go memory. For one NDVI pass the
// PCIe transfers cost far more than the kernel (12 bytes per pixel cross the
// bus, a few nanoseconds of GPU work), so the backend's job is to keep the
// copy engines busy:
//
//   - Host memory. The GPU can only DMA from page-locked memory. By default
//     (host memory "register") a job page-locks the caller's own slices in
//     place with cuMemHostRegister, after pinning them for the Go runtime
//     (runtime.Pinner), and keeps them registered until a run with other
//     slices or Close, so that repeated runs on one image pay it once; the
//     time is reported as Setup. Registrations are shared by every Backend
//     of the process (the driver allows one per page). Buffers under
//     RegisterMin bytes, or any the driver refuses, go through page-locked
//     staging buffers (cuMemHostAlloc) that are allocated once per size and
//     reused, the host copies into and out of them running on all cores
//     (host memory "staging").
//   - Transfer modes (compute.Moder). "sequential" is the textbook way:
//     upload the bands, run the kernel, download the results. "overlapped"
//     (the default) cuts the image into chunks spread over DefaultStreams
//     streams, so that the upload of one chunk, the kernel of another and
//     the download of a third run at once on the copy engines and the SMs.
//     Chunk sizes double from FirstChunkPixels up to DefaultChunkPixels and
//     halve again at the end, so that downloads start early and little is
//     left to download after the last upload, while the copy engines' cost
//     per transfer stays small. Staging copies, when needed, are pipelined
//     with the DMA too.
//   - Bands as stored: integer bands (sensor counts) are uploaded as they
//     are and converted on the GPU, halving a uint16 band's upload.
//
// # Season models
//
// The backend runs compute/season's per-pixel models over a stack of dates
// (season.Runner: RunSeries), one PTX kernel generated per plan with the
// dates' design, roles and dates as immediates (season_ptx.go, its
// normal matrix from compute/season/normal's sums), one thread a pixel.
// OpenCube keeps a block of the stack on the card, uploaded once as
// stored; its Run and Compute run any model of the same dates (another
// model, threshold, history or monitoring start) without uploading again.
//
// Every phase is timed with CUDA events. In sequential mode upload, kernel
// and download are consecutive intervals. In overlapped mode they overlap:
// upload is the span from the first chunk's upload start to the last one's
// end, download likewise, and kernel is the sum of the chunks' kernel
// times; their sum is more than Total. Total is the host's wall clock from
// the start of the job, after any setup, until the result is in the caller's
// slice: it includes staging copies and every synchronisation. Setup
// (driver, context, the kernel's JIT, device and staging allocations, registration
// of the caller's buffers) is reported apart and is not in Total.
//
// The package also registers compute/warp's "cuda" backend (WarpBackend,
// warp.go): the warp as a generated gather kernel (warp_ptx.go) over the
// source band as stored, equal to the float64 reference bit for bit.
package cudaback
