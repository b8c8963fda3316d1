package glback

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template"

	"canopy/compute"
	"canopy/compute/index"
	"canopy/shaders"
)

// jobTemplate is shaders/index.comp.tmpl, parsed once.
var jobTemplate = template.Must(template.New("index.comp.tmpl").Parse(shaders.IndexCompTmpl))

// jobKey identifies a generated shader: the program (its disassembly
// names every operation and constant exactly), the stored type of each
// input and whether a mask is read. Radiometry and nodata are uniforms, so
// a job that differs only there reuses the shader.
func jobKey(j *compute.Job) string {
	var b strings.Builder
	for _, band := range j.Bands {
		b.WriteString(band.Plane.Type.String())
		b.WriteByte(',')
	}
	if j.Mask != nil {
		b.WriteString("mask")
	}
	b.WriteByte('\n')
	b.WriteString(j.Program.String())
	return b.String()
}

// quadType is the GLSL type of one quad (four samples) of a stored type.
func quadType(t compute.DataType) string {
	switch t {
	case compute.U8:
		return "uint"
	case compute.U16:
		return "uvec2"
	case compute.I16:
		return "ivec2"
	case compute.I32:
		return "ivec4"
	}
	return "uvec4" // U32, F32 (as bits)
}

var lanes = [4]string{"x", "y", "z", "w"}

// laneLoad is the GLSL expression of lane l of quad w[k] of input k: its
// float32 physical value, NaN where nodata.
func laneLoad(t compute.DataType, k, l int) string {
	w := fmt.Sprintf("w%d[k]", k)
	switch t {
	case compute.U8:
		return fmt.Sprintf("cn_uint((%s >> %du) & 0xffu, %du)", w, 8*l, k)
	case compute.U16:
		return fmt.Sprintf("cn_uint((%s.%s >> %du) & 0xffffu, %du)", w, lanes[l/2], 16*(l%2), k)
	case compute.I16:
		return fmt.Sprintf("cn_int(bitfieldExtract(%s.%s, %d, 16), %du)", w, lanes[l/2], 16*(l%2), k)
	case compute.I32:
		return fmt.Sprintf("cn_int(%s.%s, %du)", w, lanes[l], k)
	case compute.U32:
		return fmt.Sprintf("cn_uint(%s.%s, %du)", w, lanes[l], k)
	}
	return fmt.Sprintf("cn_f32(%s.%s, %du)", w, lanes[l], k)
}

type genBand struct {
	K          int
	Role, Type string
	Quad       string
}

type genOutput struct {
	I, Binding  int
	Name, Value string
}

type genLane struct {
	Masked          string
	Inputs, Outputs []string
}

type genJob struct {
	Bands                   []genBand
	Mask                    bool
	Separate                bool // one buffer per output, from OutBinding on
	MaskBinding, OutBinding int
	Code                    []string
	Outputs                 []genOutput
	Lanes                   []genLane
}

// jobSource generates the compute shader of j from the template (VEC4S,
// ITERS and LOCAL are defined by the caller).
func jobSource(j *compute.Job) (string, error) { return genSource(j, false) }

// genSource is jobSource; separate gives each output its own buffer
// (bound after the bands and the mask, in order) instead of one shared.
func genSource(j *compute.Job, separate bool) (string, error) {
	d := genJob{Mask: j.Mask != nil, MaskBinding: len(j.Bands), OutBinding: len(j.Bands), Separate: separate}
	if d.Mask {
		d.OutBinding++
	}
	for k, band := range j.Bands {
		d.Bands = append(d.Bands, genBand{K: k, Role: band.Role, Type: band.Plane.Type.String(), Quad: quadType(band.Plane.Type)})
	}
	code, values, err := programCode(j.Program)
	if err != nil {
		return "", err
	}
	d.Code = code
	for i, v := range values {
		d.Outputs = append(d.Outputs, genOutput{I: i, Binding: d.OutBinding + i, Name: commentText(j.Names[i]), Value: v})
	}
	for l := range 4 {
		ln := genLane{Masked: "false"}
		if d.Mask {
			ln.Masked = fmt.Sprintf("(m[k] & 0x%xu) != 0u", uint32(0xff)<<(8*l))
		}
		for k, band := range j.Bands {
			ln.Inputs = append(ln.Inputs, laneLoad(band.Plane.Type, k, l))
		}
		for i := range j.Exprs {
			ln.Outputs = append(ln.Outputs, fmt.Sprintf("o%d.%s", i, lanes[l]))
		}
		d.Lanes = append(d.Lanes, ln)
	}
	var b strings.Builder
	if err := jobTemplate.Execute(&b, d); err != nil {
		return "", fmt.Errorf("generating the shader: %w", err)
	}
	return b.String(), nil
}

// commentText makes a name safe in a GLSL line comment: printable ASCII
// only (no backslash, which would continue the comment onto the next line).
func commentText(s string) string {
	b := []byte(strings.Join(strings.Fields(s), " "))
	for i, c := range b {
		if c < ' ' || c > '~' || c == '\\' {
			b[i] = '?'
		}
	}
	return string(b)
}

// literal writes a float32 constant as its bits, so that no parser rounds
// it differently, with its value in a comment.
func literal(k float32) string {
	return fmt.Sprintf("uintBitsToFloat(0x%08xu) /* %s */", math.Float32bits(k), strconv.FormatFloat(float64(k), 'g', -1, 32))
}

// programCode writes p as GLSL statements, one precise variable per
// instruction (v0, v1, ...: single assignment, whatever registers the
// program reuses), over inputs x0, x1, ...; it returns the statements and
// the variable holding each output.
func programCode(p *index.Program) (code, outputs []string, err error) {
	reg := make([]string, p.NumRegs) // the variable each register holds now
	for i, c := range p.Code {
		a := func() string { return reg[c.A] }
		b := func() string { return reg[c.B] }
		k := literal(c.K)
		var e string
		switch c.Op {
		case index.OpLoad:
			reg[c.Dst] = fmt.Sprintf("x%d", c.A)
			continue
		case index.OpConst:
			e = k
		case index.OpAdd:
			e = a() + " + " + b()
		case index.OpSub:
			e = a() + " - " + b()
		case index.OpMul:
			e = a() + " * " + b()
		case index.OpDiv:
			e = "cn_div(" + a() + ", " + b() + ")"
		case index.OpNeg:
			e = "-" + a()
		case index.OpAbs:
			e = "abs(" + a() + ")"
		case index.OpSqrt:
			e = "cn_sqrt(" + a() + ")"
		case index.OpMin:
			e = "cn_min(" + a() + ", " + b() + ")"
		case index.OpMax:
			e = "cn_max(" + a() + ", " + b() + ")"
		case index.OpAddK:
			e = a() + " + " + k
		case index.OpSubK:
			e = a() + " - " + k
		case index.OpKSub:
			e = k + " - " + a()
		case index.OpMulK:
			switch {
			case c.K != 0:
				e = a() + " * " + k
			case math.Signbit(float64(c.K)):
				e = a() + " * -cn_zero()" // a zero the compiler cannot fold
			default:
				e = a() + " * cn_zero()"
			}
		case index.OpDivK:
			e = "cn_div(" + a() + ", " + k + ")"
		case index.OpKDiv:
			e = "cn_div(" + k + ", " + a() + ")"
		case index.OpMinK:
			e = "cn_min(" + a() + ", " + k + ")"
		case index.OpMaxK:
			e = "cn_max(" + a() + ", " + k + ")"
		case index.OpFinite:
			e = "cn_finite(" + a() + ")"
		default:
			return nil, nil, fmt.Errorf("generating the shader: unknown operation %s", c.Op)
		}
		v := fmt.Sprintf("v%d", i)
		code = append(code, fmt.Sprintf("precise float %s = %s;", v, e))
		reg[c.Dst] = v
	}
	for _, r := range p.Outputs {
		outputs = append(outputs, reg[r])
	}
	return code, outputs, nil
}
