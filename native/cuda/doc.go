// Package cuda loads the NVIDIA CUDA driver API at run time. Canopy is built
// without the CUDA toolkit and without CUDA headers: driver.h declares the
// few types and functions it uses, and Load opens libcuda.so.1 (nvcuda.dll
// on Windows) with dlopen and looks every function up in a table, as
// Blender's cuew and ollama's GPU discovery do. A missing library, a
// missing symbol (a driver too old for the _v2 entry points) or a failing
// call becomes an error value that names the library, the symbol or the
// driver function and its CUresult; nothing panics, and a program that
// cannot use CUDA goes on without it.
//
// The wrappers are thin: one Go method per driver function, in the names of
// the driver API. Contexts are per OS thread in CUDA, so callers lock their
// goroutine to its thread (runtime.LockOSThread) and make their context
// current before other calls.
//
// vmm.go adds the few virtual-memory calls (cuMemCreate,
// cuMemExportToShareableHandle, cuDeviceGetUuid) with which the gl backend
// allocates its device planes in CUDA memory and hands them to OpenGL as
// file descriptors.
//
// The package needs cgo (for dlopen), as does the rest of Canopy's native
// code; it never links against the CUDA library itself.
package cuda
