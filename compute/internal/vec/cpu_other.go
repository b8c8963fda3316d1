//go:build !amd64 || noasm

package vec

// haveAVX2 is false: this build has no assembly (another architecture, or
// the noasm build tag).
func haveAVX2() bool { return false }
