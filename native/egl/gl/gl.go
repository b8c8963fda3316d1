// Package gl calls the OpenGL 4.3 core entry points Canopy's gl backend
// needs, through a table filled by Init from eglGetProcAddress (or any
// loader of that shape). Nothing here links libGL: a program that imports
// it still starts where OpenGL is missing, and only Init fails.
// InitMemoryObjects loads the optional GL_EXT_memory_object(_fd) entry
// points apart, where the context lists those extensions.
//
// The names and signatures follow github.com/go-gl/gl (GLenum is uint32,
// GLsizeiptr is int, GLsync is uintptr). Like every GL call, these must run
// on the thread where a context is current.
package gl

/*
#include <stdlib.h>
#include "gl.h"

static inline uintptr_t cgl_FenceSyncU(GLenum c, GLbitfield f) { return (uintptr_t)cgl_FenceSync(c, f); }
static inline GLenum cgl_ClientWaitSyncU(uintptr_t s, GLbitfield f, GLuint64 t) { return cgl_ClientWaitSync((GLsync)s, f, t); }
static inline void cgl_DeleteSyncU(uintptr_t s) { cgl_DeleteSync((GLsync)s); }
static inline void cgl_ShaderSource1(GLuint s, const GLchar *src) { cgl_ShaderSource(s, 1, &src, NULL); }
static inline const char *canopy_gl_name(int i) { return canopy_gl_names[i]; }
static inline void canopy_gl_set(int i, void *p) { canopy_gl_fn[i] = p; }
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// Init fills the entry-point table from getProcAddress, which returns an
// entry point by its name ("glFinish"), or nil. It fails naming the entry
// points it could not find.
func Init(getProcAddress func(name string) unsafe.Pointer) error {
	names := make([]string, C.CANOPY_GL_COUNT)
	for i := range names {
		names[i] = C.GoString(C.canopy_gl_name(C.int(i)))
	}
	return resolve(names, getProcAddress, func(i int, p unsafe.Pointer) { C.canopy_gl_set(C.int(i), p) })
}

// resolve looks each name up with getProcAddress, hands the pointer (nil
// when missing) to set with the name's index, and fails naming the entry
// points it could not find.
func resolve(names []string, getProcAddress func(name string) unsafe.Pointer, set func(i int, p unsafe.Pointer)) error {
	var missing []string
	for i, name := range names {
		p := getProcAddress(name)
		if p == nil {
			missing = append(missing, name)
		}
		set(i, p)
	}
	if len(missing) > 0 {
		return fmt.Errorf("OpenGL entry points not found: %s", strings.Join(missing, ", "))
	}
	return nil
}

// GoStr converts a NUL-terminated C string from GL into a Go string.
func GoStr(p *uint8) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Pointer(p)))
}

// GetError is glGetError.
func GetError() uint32 { return uint32(C.cgl_GetError()) }

// GetString is glGetString.
func GetString(name uint32) *uint8 { return (*uint8)(C.cgl_GetString(C.GLenum(name))) }

// GetStringi is glGetStringi.
func GetStringi(name, index uint32) *uint8 {
	return (*uint8)(C.cgl_GetStringi(C.GLenum(name), C.GLuint(index)))
}

// GetIntegerv is glGetIntegerv.
func GetIntegerv(pname uint32, data *int32) { C.cgl_GetIntegerv(C.GLenum(pname), (*C.GLint)(data)) }

// GetIntegeri_v is glGetIntegeri_v.
func GetIntegeri_v(target, index uint32, data *int32) {
	C.cgl_GetIntegeri_v(C.GLenum(target), C.GLuint(index), (*C.GLint)(data))
}

// GetInteger64v is glGetInteger64v.
func GetInteger64v(pname uint32, data *int64) {
	C.cgl_GetInteger64v(C.GLenum(pname), (*C.GLint64)(data))
}

// Finish is glFinish.
func Finish() { C.cgl_Finish() }

// Flush is glFlush.
func Flush() { C.cgl_Flush() }

// CreateShader is glCreateShader.
func CreateShader(kind uint32) uint32 { return uint32(C.cgl_CreateShader(C.GLenum(kind))) }

// DeleteShader is glDeleteShader.
func DeleteShader(shader uint32) { C.cgl_DeleteShader(C.GLuint(shader)) }

// ShaderSource is glShaderSource with one source string.
func ShaderSource(shader uint32, src string) {
	cs := C.CString(src)
	defer C.free(unsafe.Pointer(cs))
	C.cgl_ShaderSource1(C.GLuint(shader), cs)
}

// CompileShader is glCompileShader.
func CompileShader(shader uint32) { C.cgl_CompileShader(C.GLuint(shader)) }

// GetShaderiv is glGetShaderiv.
func GetShaderiv(shader, pname uint32, params *int32) {
	C.cgl_GetShaderiv(C.GLuint(shader), C.GLenum(pname), (*C.GLint)(params))
}

// GetShaderInfoLog is glGetShaderInfoLog.
func GetShaderInfoLog(shader uint32, bufSize int32, length *int32, log *uint8) {
	C.cgl_GetShaderInfoLog(C.GLuint(shader), C.GLsizei(bufSize), (*C.GLsizei)(length), (*C.GLchar)(unsafe.Pointer(log)))
}

// CreateProgram is glCreateProgram.
func CreateProgram() uint32 { return uint32(C.cgl_CreateProgram()) }

// AttachShader is glAttachShader.
func AttachShader(program, shader uint32) { C.cgl_AttachShader(C.GLuint(program), C.GLuint(shader)) }

// LinkProgram is glLinkProgram.
func LinkProgram(program uint32) { C.cgl_LinkProgram(C.GLuint(program)) }

// GetProgramiv is glGetProgramiv.
func GetProgramiv(program, pname uint32, params *int32) {
	C.cgl_GetProgramiv(C.GLuint(program), C.GLenum(pname), (*C.GLint)(params))
}

// GetProgramInfoLog is glGetProgramInfoLog.
func GetProgramInfoLog(program uint32, bufSize int32, length *int32, log *uint8) {
	C.cgl_GetProgramInfoLog(C.GLuint(program), C.GLsizei(bufSize), (*C.GLsizei)(length), (*C.GLchar)(unsafe.Pointer(log)))
}

// DeleteProgram is glDeleteProgram.
func DeleteProgram(program uint32) { C.cgl_DeleteProgram(C.GLuint(program)) }

// UseProgram is glUseProgram.
func UseProgram(program uint32) { C.cgl_UseProgram(C.GLuint(program)) }

// Uniform1ui is glUniform1ui.
func Uniform1ui(location int32, v0 uint32) { C.cgl_Uniform1ui(C.GLint(location), C.GLuint(v0)) }

// Uniform2ui is glUniform2ui.
func Uniform2ui(location int32, v0, v1 uint32) {
	C.cgl_Uniform2ui(C.GLint(location), C.GLuint(v0), C.GLuint(v1))
}

// GenQueries is glGenQueries.
func GenQueries(n int32, ids *uint32) { C.cgl_GenQueries(C.GLsizei(n), (*C.GLuint)(ids)) }

// DeleteQueries is glDeleteQueries.
func DeleteQueries(n int32, ids *uint32) { C.cgl_DeleteQueries(C.GLsizei(n), (*C.GLuint)(ids)) }

// GetQueryiv is glGetQueryiv.
func GetQueryiv(target, pname uint32, params *int32) {
	C.cgl_GetQueryiv(C.GLenum(target), C.GLenum(pname), (*C.GLint)(params))
}

// QueryCounter is glQueryCounter.
func QueryCounter(id, target uint32) { C.cgl_QueryCounter(C.GLuint(id), C.GLenum(target)) }

// GetQueryObjectui64v is glGetQueryObjectui64v.
func GetQueryObjectui64v(id, pname uint32, params *uint64) {
	C.cgl_GetQueryObjectui64v(C.GLuint(id), C.GLenum(pname), (*C.GLuint64)(params))
}

// GenBuffers is glGenBuffers.
func GenBuffers(n int32, buffers *uint32) { C.cgl_GenBuffers(C.GLsizei(n), (*C.GLuint)(buffers)) }

// DeleteBuffers is glDeleteBuffers.
func DeleteBuffers(n int32, buffers *uint32) {
	C.cgl_DeleteBuffers(C.GLsizei(n), (*C.GLuint)(buffers))
}

// BindBuffer is glBindBuffer.
func BindBuffer(target, buffer uint32) { C.cgl_BindBuffer(C.GLenum(target), C.GLuint(buffer)) }

// BindBufferRange is glBindBufferRange.
func BindBufferRange(target, index, buffer uint32, offset, size int) {
	C.cgl_BindBufferRange(C.GLenum(target), C.GLuint(index), C.GLuint(buffer), C.GLintptr(offset), C.GLsizeiptr(size))
}

// BufferStorage is glBufferStorage.
func BufferStorage(target uint32, size int, data unsafe.Pointer, flags uint32) {
	C.cgl_BufferStorage(C.GLenum(target), C.GLsizeiptr(size), data, C.GLbitfield(flags))
}

// BufferSubData is glBufferSubData.
func BufferSubData(target uint32, offset, size int, data unsafe.Pointer) {
	C.cgl_BufferSubData(C.GLenum(target), C.GLintptr(offset), C.GLsizeiptr(size), data)
}

// GetBufferSubData is glGetBufferSubData.
func GetBufferSubData(target uint32, offset, size int, data unsafe.Pointer) {
	C.cgl_GetBufferSubData(C.GLenum(target), C.GLintptr(offset), C.GLsizeiptr(size), data)
}

// CopyBufferSubData is glCopyBufferSubData.
func CopyBufferSubData(readTarget, writeTarget uint32, readOffset, writeOffset, size int) {
	C.cgl_CopyBufferSubData(C.GLenum(readTarget), C.GLenum(writeTarget), C.GLintptr(readOffset), C.GLintptr(writeOffset), C.GLsizeiptr(size))
}

// ClearBufferData is glClearBufferData.
func ClearBufferData(target, internalFormat, format, kind uint32, data unsafe.Pointer) {
	C.cgl_ClearBufferData(C.GLenum(target), C.GLenum(internalFormat), C.GLenum(format), C.GLenum(kind), data)
}

// MapBufferRange is glMapBufferRange. The memory belongs to GL.
func MapBufferRange(target uint32, offset, length int, access uint32) unsafe.Pointer {
	return C.cgl_MapBufferRange(C.GLenum(target), C.GLintptr(offset), C.GLsizeiptr(length), C.GLbitfield(access))
}

// UnmapBuffer is glUnmapBuffer.
func UnmapBuffer(target uint32) bool { return C.cgl_UnmapBuffer(C.GLenum(target)) != 0 }

// DispatchCompute is glDispatchCompute.
func DispatchCompute(x, y, z uint32) { C.cgl_DispatchCompute(C.GLuint(x), C.GLuint(y), C.GLuint(z)) }

// MemoryBarrier is glMemoryBarrier.
func MemoryBarrier(barriers uint32) { C.cgl_MemoryBarrier(C.GLbitfield(barriers)) }

// FenceSync is glFenceSync; the sync object is returned as a handle.
func FenceSync(condition, flags uint32) uintptr {
	return uintptr(C.cgl_FenceSyncU(C.GLenum(condition), C.GLbitfield(flags)))
}

// ClientWaitSync is glClientWaitSync.
func ClientWaitSync(sync uintptr, flags uint32, timeout uint64) uint32 {
	return uint32(C.cgl_ClientWaitSyncU(C.uintptr_t(sync), C.GLbitfield(flags), C.GLuint64(timeout)))
}

// DeleteSync is glDeleteSync.
func DeleteSync(sync uintptr) { C.cgl_DeleteSyncU(C.uintptr_t(sync)) }
