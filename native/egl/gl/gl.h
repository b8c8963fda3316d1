/*
 * The OpenGL 4.3 core entry points Canopy's gl backend calls, held in a
 * table filled through eglGetProcAddress (see gl.go), so that no program
 * links libGL: one without it still starts, and the gl backend says why it
 * cannot run. Types follow the Khronos registry's glcorearb.h.
 */
#ifndef CANOPY_GL_H
#define CANOPY_GL_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned int GLenum;
typedef unsigned int GLuint;
typedef int GLint;
typedef int GLsizei;
typedef unsigned int GLbitfield;
typedef unsigned char GLubyte;
typedef unsigned char GLboolean;
typedef char GLchar;
typedef ptrdiff_t GLintptr;
typedef ptrdiff_t GLsizeiptr;
typedef int64_t GLint64;
typedef uint64_t GLuint64;
typedef struct __GLsync *GLsync;

/* X(name, params, args) for functions returning void,
 * R(type, name, params, args) for the others. */
#define CANOPY_GL_FUNCS(X, R)                                                                  \
	R(GLenum, GetError, (void), ())                                                              \
	R(const GLubyte *, GetString, (GLenum name), (name))                                         \
	R(const GLubyte *, GetStringi, (GLenum name, GLuint i), (name, i))                           \
	X(GetIntegerv, (GLenum p, GLint *v), (p, v))                                                 \
	X(GetIntegeri_v, (GLenum p, GLuint i, GLint *v), (p, i, v))                                  \
	X(GetInteger64v, (GLenum p, GLint64 *v), (p, v))                                             \
	X(Finish, (void), ())                                                                        \
	X(Flush, (void), ())                                                                         \
	R(GLuint, CreateShader, (GLenum t), (t))                                                     \
	X(DeleteShader, (GLuint s), (s))                                                             \
	X(ShaderSource, (GLuint s, GLsizei n, const GLchar *const *src, const GLint *len), (s, n, src, len)) \
	X(CompileShader, (GLuint s), (s))                                                            \
	X(GetShaderiv, (GLuint s, GLenum p, GLint *v), (s, p, v))                                    \
	X(GetShaderInfoLog, (GLuint s, GLsizei n, GLsizei *len, GLchar *log), (s, n, len, log))      \
	R(GLuint, CreateProgram, (void), ())                                                         \
	X(AttachShader, (GLuint p, GLuint s), (p, s))                                                \
	X(LinkProgram, (GLuint p), (p))                                                              \
	X(GetProgramiv, (GLuint p, GLenum n, GLint *v), (p, n, v))                                   \
	X(GetProgramInfoLog, (GLuint p, GLsizei n, GLsizei *len, GLchar *log), (p, n, len, log))     \
	X(DeleteProgram, (GLuint p), (p))                                                            \
	X(UseProgram, (GLuint p), (p))                                                               \
	X(Uniform1ui, (GLint loc, GLuint a), (loc, a))                                               \
	X(Uniform2ui, (GLint loc, GLuint a, GLuint b), (loc, a, b))                                  \
	X(GenQueries, (GLsizei n, GLuint *ids), (n, ids))                                            \
	X(DeleteQueries, (GLsizei n, const GLuint *ids), (n, ids))                                   \
	X(GetQueryiv, (GLenum t, GLenum p, GLint *v), (t, p, v))                                     \
	X(QueryCounter, (GLuint id, GLenum t), (id, t))                                              \
	X(GetQueryObjectui64v, (GLuint id, GLenum p, GLuint64 *v), (id, p, v))                       \
	X(GenBuffers, (GLsizei n, GLuint *b), (n, b))                                                \
	X(DeleteBuffers, (GLsizei n, const GLuint *b), (n, b))                                       \
	X(BindBuffer, (GLenum t, GLuint b), (t, b))                                                  \
	X(BindBufferRange, (GLenum t, GLuint i, GLuint b, GLintptr off, GLsizeiptr n), (t, i, b, off, n)) \
	X(BufferStorage, (GLenum t, GLsizeiptr n, const void *data, GLbitfield f), (t, n, data, f))  \
	X(BufferSubData, (GLenum t, GLintptr off, GLsizeiptr n, const void *data), (t, off, n, data)) \
	X(GetBufferSubData, (GLenum t, GLintptr off, GLsizeiptr n, void *data), (t, off, n, data))   \
	X(CopyBufferSubData, (GLenum r, GLenum w, GLintptr ro, GLintptr wo, GLsizeiptr n), (r, w, ro, wo, n)) \
	X(ClearBufferData, (GLenum t, GLenum f, GLenum fmt, GLenum ty, const void *data), (t, f, fmt, ty, data)) \
	R(void *, MapBufferRange, (GLenum t, GLintptr off, GLsizeiptr n, GLbitfield a), (t, off, n, a)) \
	R(GLboolean, UnmapBuffer, (GLenum t), (t))                                                   \
	X(DispatchCompute, (GLuint x, GLuint y, GLuint z), (x, y, z))                                \
	X(MemoryBarrier, (GLbitfield b), (b))                                                        \
	R(GLsync, FenceSync, (GLenum c, GLbitfield f), (c, f))                                       \
	R(GLenum, ClientWaitSync, (GLsync s, GLbitfield f, GLuint64 t), (s, f, t))                   \
	X(DeleteSync, (GLsync s), (s))

#define CANOPY_GL_IDX_X(name, params, args) CANOPY_GL_##name,
#define CANOPY_GL_IDX_R(type, name, params, args) CANOPY_GL_##name,
enum { CANOPY_GL_FUNCS(CANOPY_GL_IDX_X, CANOPY_GL_IDX_R) CANOPY_GL_COUNT };

/* The entry points, indexed by CANOPY_GL_<name>, and their "gl<name>". */
extern void *canopy_gl_fn[CANOPY_GL_COUNT];
extern const char *const canopy_gl_names[CANOPY_GL_COUNT];

/* cgl_<name> calls gl<name> through the table. */
#define CANOPY_GL_CALL_X(name, params, args) \
	static inline void cgl_##name params { ((void(*) params)canopy_gl_fn[CANOPY_GL_##name]) args; }
#define CANOPY_GL_CALL_R(type, name, params, args) \
	static inline type cgl_##name params { return ((type(*) params)canopy_gl_fn[CANOPY_GL_##name]) args; }
CANOPY_GL_FUNCS(CANOPY_GL_CALL_X, CANOPY_GL_CALL_R)

#endif
