package gl

/*
#include "gl.h"

// GL_EXT_memory_object and GL_EXT_memory_object_fd: optional, loaded by
// InitMemoryObjects.
static void (*mo_Create)(GLsizei, GLuint *);
static void (*mo_Delete)(GLsizei, const GLuint *);
static void (*mo_Param)(GLuint, GLenum, const GLint *);
static void (*mo_ImportFd)(GLuint, GLuint64, GLenum, GLint);
static void (*mo_BufferStorageMem)(GLenum, GLsizeiptr, GLuint, GLuint64);
static void (*mo_GetUnsignedBytei)(GLenum, GLuint, GLubyte *);

static void mo_set(int i, void *p)
{
	switch (i) {
	case 0: mo_Create = p; break;
	case 1: mo_Delete = p; break;
	case 2: mo_Param = p; break;
	case 3: mo_ImportFd = p; break;
	case 4: mo_BufferStorageMem = p; break;
	case 5: mo_GetUnsignedBytei = p; break;
	}
}
static void cgl_CreateMemoryObjectsEXT(GLsizei n, GLuint *m) { mo_Create(n, m); }
static void cgl_DeleteMemoryObjectsEXT(GLsizei n, const GLuint *m) { mo_Delete(n, m); }
static void cgl_MemoryObjectParameterivEXT(GLuint m, GLenum p, const GLint *v) { mo_Param(m, p, v); }
static void cgl_ImportMemoryFdEXT(GLuint m, GLuint64 n, GLenum t, GLint fd) { mo_ImportFd(m, n, t, fd); }
static void cgl_BufferStorageMemEXT(GLenum t, GLsizeiptr n, GLuint m, GLuint64 off) { mo_BufferStorageMem(t, n, m, off); }
static void cgl_GetUnsignedBytei_vEXT(GLenum t, GLuint i, GLubyte *v) { mo_GetUnsignedBytei(t, i, v); }
*/
import "C"

import "unsafe"

// Enumerants of GL_EXT_memory_object(_fd).
const (
	DEDICATED_MEMORY_OBJECT_EXT = 0x9581
	HANDLE_TYPE_OPAQUE_FD_EXT   = 0x9586
	NUM_DEVICE_UUIDS_EXT        = 0x9596
	DEVICE_UUID_EXT             = 0x9597
)

var memObjNames = []string{
	"glCreateMemoryObjectsEXT", "glDeleteMemoryObjectsEXT", "glMemoryObjectParameterivEXT",
	"glImportMemoryFdEXT", "glBufferStorageMemEXT", "glGetUnsignedBytei_vEXT",
}

// InitMemoryObjects loads the entry points of GL_EXT_memory_object and
// GL_EXT_memory_object_fd. Call it only when the current context lists both
// extensions (a loader may hand out stubs for anything); the functions
// below must not be called unless it succeeded.
func InitMemoryObjects(getProcAddress func(name string) unsafe.Pointer) error {
	return resolve(memObjNames, getProcAddress, func(i int, p unsafe.Pointer) { C.mo_set(C.int(i), p) })
}

// CreateMemoryObjectsEXT is glCreateMemoryObjectsEXT.
func CreateMemoryObjectsEXT(n int32, objs *uint32) {
	C.cgl_CreateMemoryObjectsEXT(C.GLsizei(n), (*C.GLuint)(objs))
}

// DeleteMemoryObjectsEXT is glDeleteMemoryObjectsEXT.
func DeleteMemoryObjectsEXT(n int32, objs *uint32) {
	C.cgl_DeleteMemoryObjectsEXT(C.GLsizei(n), (*C.GLuint)(objs))
}

// MemoryObjectParameterivEXT is glMemoryObjectParameterivEXT.
func MemoryObjectParameterivEXT(obj, pname uint32, params *int32) {
	C.cgl_MemoryObjectParameterivEXT(C.GLuint(obj), C.GLenum(pname), (*C.GLint)(params))
}

// ImportMemoryFdEXT is glImportMemoryFdEXT; GL owns fd afterwards.
func ImportMemoryFdEXT(obj uint32, size uint64, handleType uint32, fd int32) {
	C.cgl_ImportMemoryFdEXT(C.GLuint(obj), C.GLuint64(size), C.GLenum(handleType), C.GLint(fd))
}

// BufferStorageMemEXT is glBufferStorageMemEXT.
func BufferStorageMemEXT(target uint32, size int, obj uint32, offset uint64) {
	C.cgl_BufferStorageMemEXT(C.GLenum(target), C.GLsizeiptr(size), C.GLuint(obj), C.GLuint64(offset))
}

// GetUnsignedBytei_vEXT is glGetUnsignedBytei_vEXT.
func GetUnsignedBytei_vEXT(target, index uint32, data *uint8) {
	C.cgl_GetUnsignedBytei_vEXT(C.GLenum(target), C.GLuint(index), (*C.GLubyte)(data))
}
