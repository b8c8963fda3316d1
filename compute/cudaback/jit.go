package cudaback

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"canopy/native/cuda"
)

// KernelCacheSize is how many generated kernels a Backend keeps loaded;
// the least recently used one is unloaded to make room for another.
const KernelCacheSize = 64

// jitKernel is a generated kernel loaded into the context.
type jitKernel struct {
	spec *kernelSpec
	mod  *cuda.Module
	fn   cuda.Function
	// compile is the host time cuModuleLoadDataEx took, wall the JIT
	// compiler's own; registers is what ptxas reported (0 if it did not).
	compile, wall time.Duration
	registers     int
	used          uint64 // the run that used it last, for eviction
	// busy counts the jobs of open streams (stream.go) queued on it: a
	// busy kernel is not evicted.
	busy int
}

// JITError is generated PTX that the driver's JIT compiler refused: a bug
// in the generator, or a driver too old for it. Error is one line naming
// the PTX line and its text.
type JITError struct {
	// Line is the 1-based line of the PTX that ptxas named, 0 if none.
	Line int
	// Source is that line of the PTX, trimmed.
	Source string
	// Msg is ptxas's message for it, or the driver's error.
	Msg string
	// Log is the JIT's whole error log.
	Log string
	// Target is what the PTX was generated for.
	Target string
	Err    error
}

func (e *JITError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("the driver cannot compile the generated kernel (%s): PTX line %d: %s, in %q", e.Target, e.Line, e.Msg, e.Source)
	}
	return fmt.Sprintf("the driver cannot compile the generated kernel (%s): %s", e.Target, e.Msg)
}

func (e *JITError) Unwrap() error { return e.Err }

var (
	ptxasLineRe = regexp.MustCompile(`line (\d+); (?:error|fatal)\s*:\s*(.*)`)
	ptxasRegsRe = regexp.MustCompile(`Used (\d+) registers`)
)

// jitError builds the one-line error of a failed JIT from its log.
func jitError(ptx string, t ptxTarget, log cuda.JITLog, err error) *JITError {
	e := &JITError{Log: log.Error, Target: t.String(), Err: err, Msg: err.Error()}
	for _, l := range strings.Split(log.Error, "\n") {
		if m := ptxasLineRe.FindStringSubmatch(l); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = strings.TrimSpace(m[2])
			lines := strings.Split(ptx, "\n")
			if e.Line >= 1 && e.Line <= len(lines) {
				e.Source = strings.TrimSpace(lines[e.Line-1])
			}
			return e
		}
	}
	for _, l := range strings.Split(log.Error, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			e.Msg = l + " (" + err.Error() + ")"
			break
		}
	}
	return e
}

// target is the PTX target for the open device.
func (s *state) target() (ptxTarget, error) {
	return chooseTarget(s.dev.Major, s.dev.Minor, s.dev.Driver)
}

// kernel returns the loaded kernel for spec, compiling it on a miss;
// jitted says whether it did. Context current, s.mu held.
func (s *state) kernel(spec *kernelSpec) (k *jitKernel, jitted bool, err error) {
	s.runs++
	if k, ok := s.kernels[spec.PTX]; ok {
		k.used = s.runs
		return k, false, nil
	}
	k, err = s.compile(spec)
	if err != nil {
		return nil, true, err
	}
	if s.kernels == nil {
		s.kernels = map[string]*jitKernel{}
	}
	if len(s.kernels) >= KernelCacheSize {
		var old string
		for key, c := range s.kernels {
			if c.busy == 0 && (old == "" || c.used < s.kernels[old].used) {
				old = key
			}
		}
		if old != "" {
			s.kernels[old].mod.Unload()
			delete(s.kernels, old)
		}
	}
	k.used = s.runs
	s.kernels[spec.PTX] = k
	return k, true, nil
}

// compile JIT-compiles spec's PTX into a module of the current context.
func (s *state) compile(spec *kernelSpec) (*jitKernel, error) {
	t0 := time.Now()
	mod, log, err := s.drv.LoadModuleJIT([]byte(spec.PTX))
	if err != nil {
		return nil, jitError(spec.PTX, spec.Target, log, err)
	}
	entry := spec.Entry
	if entry == "" {
		entry = KernelName
	}
	fn, err := mod.Function(entry)
	if err != nil {
		mod.Unload()
		return nil, err
	}
	k := &jitKernel{spec: spec, mod: mod, fn: fn, compile: time.Since(t0), wall: log.Wall}
	if m := ptxasRegsRe.FindStringSubmatch(log.Info); m != nil {
		k.registers, _ = strconv.Atoi(m[1])
	}
	return k, nil
}

// unloadKernels unloads every cached kernel (context current).
func (s *state) unloadKernels() {
	for _, k := range s.kernels {
		k.mod.Unload()
	}
	s.kernels = nil
}
