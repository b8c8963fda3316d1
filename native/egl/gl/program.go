package gl

import (
	"errors"
	"fmt"
	"strings"
)

// CompileCompute compiles and links a compute shader from its source; the
// error carries the driver's log, on one line.
func CompileCompute(source string) (uint32, error) {
	sh := CreateShader(COMPUTE_SHADER)
	defer DeleteShader(sh)
	ShaderSource(sh, source)
	CompileShader(sh)
	var ok int32
	GetShaderiv(sh, COMPILE_STATUS, &ok)
	if ok == FALSE {
		return 0, errors.New(infoLog(sh, GetShaderiv, GetShaderInfoLog))
	}
	prog := CreateProgram()
	AttachShader(prog, sh)
	LinkProgram(prog)
	GetProgramiv(prog, LINK_STATUS, &ok)
	if ok == FALSE {
		log := infoLog(prog, GetProgramiv, GetProgramInfoLog)
		DeleteProgram(prog)
		return 0, fmt.Errorf("link: %s", log)
	}
	return prog, nil
}

// infoLog is a shader's or program's log, its white space folded.
func infoLog(obj uint32, get func(uint32, uint32, *int32), read func(uint32, int32, *int32, *uint8)) string {
	var n int32
	get(obj, INFO_LOG_LENGTH, &n)
	if n <= 1 {
		return "no log"
	}
	buf := make([]uint8, n)
	read(obj, n, nil, &buf[0])
	return strings.Join(strings.Fields(GoStr(&buf[0])), " ")
}
