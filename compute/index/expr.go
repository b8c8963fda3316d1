package index

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NumRoles is the number of band roles.
const NumRoles = 10

// Roles are the band roles a formula can use, in canonical order (the order
// of Expr.Roles and Program.Inputs).
var Roles = [NumRoles]string{"blue", "green", "red", "rededge1", "rededge2", "rededge3", "nir", "nir2", "swir1", "swir2"}

// RoleIndex is the position of a role in Roles (matched without regard to
// case), or -1 for a name that is not a role.
func RoleIndex(name string) int {
	for i, r := range Roles {
		if strings.EqualFold(r, name) {
			return i
		}
	}
	return -1
}

// Kind is what an Expr node is.
type Kind uint8

// The node kinds. Operators and functions take Args in source order.
const (
	KindNum   Kind = iota // a number: Value
	KindRole              // a band role: Role
	KindNeg               // -Args[0]
	KindAdd               // Args[0] + Args[1]
	KindSub               // Args[0] - Args[1]
	KindMul               // Args[0] * Args[1]
	KindDiv               // Args[0] / Args[1]
	KindAbs               // abs(Args[0])
	KindSqrt              // sqrt(Args[0])
	KindMin               // min(Args[0], Args[1])
	KindMax               // max(Args[0], Args[1])
	KindClamp             // clamp(Args[0], Args[1], Args[2])
	numKinds
)

// kindInfo names each kind and gives its operand count.
var kindInfo = [numKinds]struct {
	name  string // function name or operator
	arity int
}{
	KindNum:   {"number", 0},
	KindRole:  {"role", 0},
	KindNeg:   {"-", 1},
	KindAdd:   {"+", 2},
	KindSub:   {"-", 2},
	KindMul:   {"*", 2},
	KindDiv:   {"/", 2},
	KindAbs:   {"abs", 1},
	KindSqrt:  {"sqrt", 1},
	KindMin:   {"min", 2},
	KindMax:   {"max", 2},
	KindClamp: {"clamp", 3},
}

// Functions are the function names of the language.
var Functions = []string{"abs", "sqrt", "min", "max", "clamp"}

// functionKind is the kind of a function name (without regard to case).
func functionKind(name string) (Kind, bool) {
	for _, k := range []Kind{KindAbs, KindSqrt, KindMin, KindMax, KindClamp} {
		if strings.EqualFold(kindInfo[k].name, name) {
			return k, true
		}
	}
	return 0, false
}

// String names the kind: the operator or function name.
func (k Kind) String() string {
	if k < numKinds {
		return kindInfo[k].name
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Arity is the number of operands a node of this kind has.
func (k Kind) Arity() int {
	if k < numKinds {
		return kindInfo[k].arity
	}
	return -1
}

// Expr is a node of a formula's syntax tree. Trees come from Parse, or are
// built directly (tests, generators); Check validates a built tree.
type Expr struct {
	Kind  Kind
	Value float64 // KindNum: the number (Parse gives finite, non-negative values)
	Role  int     // KindRole: the role's index in Roles
	Args  []*Expr // operands, Kind.Arity() of them
	// Col is the 1-based column of the node's token in the parsed source
	// (the operator for operators, the name for functions); 0 when built.
	Col int
}

// Check validates a tree: known kinds, the right number of operands, role
// indices in range, numbers finite and representable in float32. Trees from
// Parse always pass.
func (e *Expr) Check() error {
	if e == nil {
		return fmt.Errorf("nil expression")
	}
	if e.Kind >= numKinds {
		return fmt.Errorf("unknown node kind %d", uint8(e.Kind))
	}
	if len(e.Args) != e.Kind.Arity() {
		return fmt.Errorf("%s takes %d operands, has %d", e.Kind, e.Kind.Arity(), len(e.Args))
	}
	switch e.Kind {
	case KindNum:
		if err := checkLiteral(e.Value); err != "" {
			return fmt.Errorf("number %v %s", e.Value, err)
		}
	case KindRole:
		if e.Role < 0 || e.Role >= NumRoles {
			return fmt.Errorf("role index %d out of range", e.Role)
		}
	}
	for _, a := range e.Args {
		if err := a.Check(); err != nil {
			return err
		}
	}
	return nil
}

// checkLiteral says what is wrong with a number, or "" when it is fine.
func checkLiteral(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "is not finite"
	case math.Abs(v) > math.MaxFloat32:
		return "is too large for float32 (max 3.4e38)"
	case v != 0 && float32(v) == 0:
		return "is too small for float32 (it would round to 0)"
	}
	return ""
}

// Equal reports whether two trees are the same formula (columns ignored;
// numbers compared by value).
func (e *Expr) Equal(o *Expr) bool {
	if e == nil || o == nil {
		return e == o
	}
	if e.Kind != o.Kind || len(e.Args) != len(o.Args) {
		return false
	}
	switch e.Kind {
	case KindNum:
		if e.Value != o.Value && !(math.IsNaN(e.Value) && math.IsNaN(o.Value)) {
			return false
		}
	case KindRole:
		if e.Role != o.Role {
			return false
		}
	}
	for i := range e.Args {
		if !e.Args[i].Equal(o.Args[i]) {
			return false
		}
	}
	return true
}

// Roles lists the roles the formula uses, once each, in the canonical order
// of Roles.
func (e *Expr) Roles() []string {
	var used [NumRoles]bool
	e.walk(func(n *Expr) {
		if n.Kind == KindRole && n.Role >= 0 && n.Role < NumRoles {
			used[n.Role] = true
		}
	})
	var out []string
	for i, u := range used {
		if u {
			out = append(out, Roles[i])
		}
	}
	return out
}

// walk calls f on every node, parents before children.
func (e *Expr) walk(f func(*Expr)) {
	f(e)
	for _, a := range e.Args {
		a.walk(f)
	}
}

// Precedence levels of String's output.
const (
	precAdd   = 1 // + -
	precMul   = 2 // * /
	precUnary = 3 // unary minus
	precAtom  = 4 // numbers, roles, calls, parenthesised
)

func (e *Expr) prec() int {
	switch e.Kind {
	case KindAdd, KindSub:
		return precAdd
	case KindMul, KindDiv:
		return precMul
	case KindNeg:
		return precUnary
	case KindNum:
		if e.Value < 0 || math.Signbit(e.Value) {
			return precUnary
		}
	}
	return precAtom
}

// String is the canonical text of the formula: lower-case names, one space
// around binary operators, ", " between arguments, and parentheses only
// where precedence and left associativity need them, so that Parse of it
// gives an equal tree (for non-negative numbers, which is what Parse makes;
// a negative number is written as a negation).
func (e *Expr) String() string {
	var b strings.Builder
	e.format(&b)
	return b.String()
}

func (e *Expr) format(b *strings.Builder) {
	switch e.Kind {
	case KindNum:
		b.WriteString(formatNumber(e.Value))
	case KindRole:
		if e.Role >= 0 && e.Role < NumRoles {
			b.WriteString(Roles[e.Role])
		} else {
			fmt.Fprintf(b, "role%d", e.Role)
		}
	case KindNeg:
		b.WriteByte('-')
		e.child(b, 0, precUnary)
	case KindAdd, KindSub, KindMul, KindDiv:
		p := e.prec()
		e.child(b, 0, p)
		b.WriteString(" " + e.Kind.String() + " ")
		e.child(b, 1, p+1)
	default:
		b.WriteString(e.Kind.String())
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.format(b)
		}
		b.WriteByte(')')
	}
}

// child writes operand i, in parentheses when its precedence is below min.
func (e *Expr) child(b *strings.Builder, i, min int) {
	if i >= len(e.Args) || e.Args[i] == nil {
		b.WriteString("?")
		return
	}
	a := e.Args[i]
	if a.prec() < min {
		b.WriteByte('(')
		a.format(b)
		b.WriteByte(')')
		return
	}
	a.format(b)
}

// formatNumber writes a number in the shortest form that parses back to the
// same float64.
func formatNumber(v float64) string {
	if math.Signbit(v) {
		return "-" + formatNumber(-v)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
