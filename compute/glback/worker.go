package glback

import (
	"fmt"
	"runtime"
	"time"

	"canopy/native/egl"
)

// worker is the goroutine that owns a GL context: it locks its OS thread,
// creates the context there and runs every job sent to it.
type worker struct {
	jobs chan func(*glState)
	done chan struct{}
}

// started is what a new worker reports once its context is ready (or not).
type started struct {
	err                        error
	renderer, version, display string
	setup                      time.Duration // context creation and compilation
	soft                       bool          // a CPU rasteriser
	limits                     string        // glState.limits
	cudaMemory                 bool          // device planes in CUDA memory
}

func startWorker(kind egl.Kind, tu tuning) (*worker, started) {
	w := &worker{jobs: make(chan func(*glState)), done: make(chan struct{})}
	ready := make(chan started)
	go w.loop(kind, tu, ready)
	s := <-ready
	if s.err != nil {
		<-w.done
		return nil, s
	}
	return w, s
}

func (w *worker) loop(kind egl.Kind, tu tuning, ready chan<- started) {
	// Never unlocked: when this goroutine ends, its thread ends with it and
	// takes the thread's EGL state along.
	runtime.LockOSThread()
	defer close(w.done)
	t0 := time.Now()
	st, err := newGLState(kind, tu)
	if err != nil {
		ready <- started{err: err}
		return
	}
	ready <- started{renderer: st.renderer, version: st.version, display: st.ctx.Display(), setup: time.Since(t0), soft: st.software(), limits: st.limits(), cudaMemory: st.mem != nil}
	for job := range w.jobs {
		job(st)
	}
	st.release()
}

// do runs fn on the worker's thread, with the context checked current
// first, and returns its error. A panic in fn becomes an error rather than
// killing the thread that owns the context.
func (w *worker) do(fn func(*glState) error) error {
	reply := make(chan error, 1)
	w.jobs <- func(st *glState) {
		defer func() {
			if p := recover(); p != nil {
				reply <- fmt.Errorf("internal error on the GL thread: %v", p)
			}
		}()
		if err := st.ensureCurrent(); err != nil {
			reply <- err
			return
		}
		reply <- fn(st)
	}
	return <-reply
}

// stop ends the worker after its last job, releasing the context.
func (w *worker) stop() {
	close(w.jobs)
	<-w.done
}
