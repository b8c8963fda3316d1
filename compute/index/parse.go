package index

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// SyntaxError is a malformed or invalid formula: the 1-based column (in
// characters) of the offending token and what is wrong there.
type SyntaxError struct {
	Col int
	Msg string
}

// Error is "column N: msg".
func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// maxDepth bounds the nesting of a formula, so that hostile input cannot
// exhaust the stack.
const maxDepth = 256

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // + - * /
	tokLParen
	tokRParen
	tokComma
)

type token struct {
	kind tokKind
	text string
	col  int     // 1-based
	num  float64 // tokNum
}

// describe quotes a token for messages.
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of expression"
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src   []rune
	pos   int   // next rune to lex
	tok   token // current token
	prev  token // the token before tok
	depth int
}

// Parse reads a formula and checks it (roles, functions, argument counts).
// The error, if any, is a *SyntaxError naming the column.
func Parse(src string) (*Expr, error) {
	p := &parser{src: []rune(src)}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, &SyntaxError{Col: 1, Msg: "empty expression"}
	}
	e, err := p.parseSum()
	if err != nil {
		return nil, err
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return e, nil
}

// MustParse is Parse for formulas fixed in the program (the catalogue,
// tests); it panics on an error.
func MustParse(src string) *Expr {
	e, err := Parse(src)
	if err != nil {
		panic(fmt.Sprintf("index.MustParse(%q): %v", src, err))
	}
	return e
}

func errAt(col int, format string, args ...any) error {
	return &SyntaxError{Col: col, Msg: fmt.Sprintf(format, args...)}
}

// next lexes the following token into p.tok.
func (p *parser) next() error {
	p.prev = p.tok
	for p.pos < len(p.src) && unicode.IsSpace(p.src[p.pos]) {
		p.pos++
	}
	col := p.pos + 1
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, col: col}
		return nil
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		p.tok = token{kind: tokLParen, text: "(", col: col}
	case c == ')':
		p.pos++
		p.tok = token{kind: tokRParen, text: ")", col: col}
	case c == ',':
		p.pos++
		p.tok = token{kind: tokComma, text: ",", col: col}
	case c == '*' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
		return errAt(col, `"**" is not supported: there is no power operator (write x * x)`)
	case c == '+' || c == '-' || c == '*' || c == '/':
		p.pos++
		p.tok = token{kind: tokOp, text: string(c), col: col}
	case c >= '0' && c <= '9' || c == '.':
		return p.lexNumber()
	case c == '_' || unicode.IsLetter(c):
		start := p.pos
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || unicode.IsLetter(p.src[p.pos]) || unicode.IsDigit(p.src[p.pos])) {
			p.pos++
		}
		p.tok = token{kind: tokIdent, text: string(p.src[start:p.pos]), col: col}
	case c == '^':
		return errAt(col, `"^" is not supported: there is no power operator (write x * x)`)
	case c == '\u2212':
		return errAt(col, `unexpected character %q (a typographic minus: type "-")`, string(c))
	case c == '\u00d7' || c == '\u22c5' || c == '\u00b7':
		return errAt(col, `unexpected character %q (type "*" to multiply)`, string(c))
	case c == '\u00f7':
		return errAt(col, `unexpected character %q (type "/" to divide)`, string(c))
	default:
		return errAt(col, "unexpected character %s", strconv.QuoteToGraphic(string(c)))
	}
	return nil
}

// lexNumber reads a decimal number: digits, an optional fraction, an
// optional exponent. Everything that looks like part of a number is taken,
// so that "1..2" or "1e" is reported whole.
func (p *parser) lexNumber() error {
	start := p.pos
	col := start + 1
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= '0' && c <= '9' || c == '.' {
			p.pos++
			continue
		}
		if c == 'e' || c == 'E' {
			p.pos++
			if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
				p.pos++
			}
			continue
		}
		break
	}
	text := string(p.src[start:p.pos])
	if !validNumber(text) {
		return errAt(col, "malformed number %q", text)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return errAt(col, "number %q is out of range", text)
	}
	if msg := checkLiteral(v); msg != "" {
		return errAt(col, "number %q %s", text, msg)
	}
	p.tok = token{kind: tokNum, text: text, col: col, num: v}
	return nil
}

// validNumber checks digits [. digits] [e [+-] digits] with at least one
// digit in the mantissa.
func validNumber(s string) bool {
	i, digits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// peekRune is the next non-space character after the current token, or 0.
func (p *parser) peekRune() rune {
	for i := p.pos; i < len(p.src); i++ {
		if !unicode.IsSpace(p.src[i]) {
			return p.src[i]
		}
	}
	return 0
}

// expectEnd checks that the whole input was used.
func (p *parser) expectEnd() error {
	switch p.tok.kind {
	case tokEOF:
		return nil
	case tokRParen, tokComma:
		return errAt(p.tok.col, "unexpected %s", p.tok.describe())
	}
	return p.missingOperator()
}

// missingOperator reports an operand where an operator was expected.
func (p *parser) missingOperator() error {
	return errAt(p.tok.col, "missing operator before %s", p.tok.describe())
}

// parseSum: term (("+" | "-") term)*
func (p *parser) parseSum() (*Expr, error) {
	left, err := p.parseProduct()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tokOp && (p.tok.text == "+" || p.tok.text == "-") {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseProduct()
		if err != nil {
			return nil, err
		}
		k := KindAdd
		if op.text == "-" {
			k = KindSub
		}
		left = &Expr{Kind: k, Args: []*Expr{left, right}, Col: op.col}
	}
	return left, nil
}

// parseProduct: unary (("*" | "/") unary)*
func (p *parser) parseProduct() (*Expr, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tokOp && (p.tok.text == "*" || p.tok.text == "/") {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		k := KindMul
		if op.text == "/" {
			k = KindDiv
		}
		left = &Expr{Kind: k, Args: []*Expr{left, right}, Col: op.col}
	}
	return left, nil
}

// parseUnary: "-" unary | primary
func (p *parser) parseUnary() (*Expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, errAt(p.tok.col, "expression nested too deeply (more than %d levels)", maxDepth)
	}
	if p.tok.kind == tokOp && p.tok.text == "-" {
		op := p.tok
		if err := p.next(); err != nil {
			return nil, err
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &Expr{Kind: KindNeg, Args: []*Expr{x}, Col: op.col}, nil
	}
	return p.parsePrimary()
}

// parsePrimary: number | role | function "(" args ")" | "(" sum ")"
func (p *parser) parsePrimary() (*Expr, error) {
	t := p.tok
	switch t.kind {
	case tokNum:
		if err := p.next(); err != nil {
			return nil, err
		}
		return &Expr{Kind: KindNum, Value: t.num, Col: t.col}, nil
	case tokIdent:
		return p.parseName()
	case tokLParen:
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.parseSum()
		if err != nil {
			return nil, err
		}
		switch p.tok.kind {
		case tokRParen:
			return e, p.next()
		case tokEOF:
			return nil, errAt(t.col, `unclosed "("`)
		case tokComma:
			return nil, errAt(p.tok.col, `unexpected ","`)
		}
		return nil, p.missingOperator()
	case tokEOF:
		switch p.prev.kind {
		case tokComma:
			return nil, errAt(p.prev.col, `missing argument after ","`)
		case tokLParen:
			return nil, errAt(p.prev.col, `unclosed "("`)
		}
		return nil, errAt(p.prev.col, "missing operand after %s", p.prev.describe())
	case tokOp:
		return nil, errAt(t.col, "missing operand before %s", t.describe())
	}
	return nil, errAt(t.col, "unexpected %s", t.describe())
}

// signatures show how each function is called, for messages.
var signatures = map[Kind]string{
	KindAbs: "abs(x)", KindSqrt: "sqrt(x)", KindMin: "min(a, b)", KindMax: "max(a, b)", KindClamp: "clamp(x, lo, hi)",
}

// parseName: a role, or a function call.
func (p *parser) parseName() (*Expr, error) {
	t := p.tok
	// Decide on the name before lexing on, so that its error comes first.
	call := p.peekRune() == '('
	if r := RoleIndex(t.text); r >= 0 {
		if call {
			return nil, errAt(t.col, "%q is a band role, not a function", t.text)
		}
		return &Expr{Kind: KindRole, Role: r, Col: t.col}, p.next()
	}
	k, isFunc := functionKind(t.text)
	if !isFunc {
		if call {
			return nil, errAt(t.col, "unknown function %q (functions: %s)", t.text, strings.Join(Functions, ", "))
		}
		if _, ok := Lookup(t.text); ok {
			return nil, errAt(t.col, "%q is an index, not a band role (roles: %s)", t.text, strings.Join(Roles[:], ", "))
		}
		return nil, errAt(t.col, "unknown role %q%s (roles: %s)", t.text, DidYouMean(t.text, Roles[:]), strings.Join(Roles[:], ", "))
	}
	if !call {
		return nil, errAt(t.col, "%s is a function: write %s", strings.ToLower(t.text), signatures[k])
	}
	if err := p.next(); err != nil { // to the "("
		return nil, err
	}
	open := p.tok
	if err := p.next(); err != nil {
		return nil, err
	}
	var args []*Expr
	if p.tok.kind != tokRParen {
		for {
			a, err := p.parseSum()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.tok.kind == tokComma {
				if err := p.next(); err != nil {
					return nil, err
				}
				continue
			}
			if p.tok.kind == tokRParen {
				break
			}
			if p.tok.kind == tokEOF {
				return nil, errAt(open.col, `unclosed "("`)
			}
			return nil, p.missingOperator()
		}
	}
	if err := p.next(); err != nil { // the ")"
		return nil, err
	}
	if n := k.Arity(); len(args) != n {
		plural := "s"
		if n == 1 {
			plural = ""
		}
		return nil, errAt(t.col, "%s takes %d argument%s, got %d", k, n, plural, len(args))
	}
	return &Expr{Kind: k, Args: args, Col: t.col}, nil
}
