//go:build amd64 && !noasm

package vec

import "golang.org/x/sys/cpu"

// haveAVX2 reports whether the CPU and the operating system run AVX2 (x/sys
// checks that the OS saves the YMM registers).
func haveAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasAVX }
