/* The table behind gl.h. */
#include "gl.h"

void *canopy_gl_fn[CANOPY_GL_COUNT];

#define CANOPY_GL_NAME_X(name, params, args) "gl" #name,
#define CANOPY_GL_NAME_R(type, name, params, args) "gl" #name,
const char *const canopy_gl_names[CANOPY_GL_COUNT] = {CANOPY_GL_FUNCS(CANOPY_GL_NAME_X, CANOPY_GL_NAME_R)};
