package outfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals are the interrupts the handler takes: Ctrl+C (os.Interrupt;
// CTRL_C_EVENT on Windows) and SIGTERM (a kill, a job scheduler's
// cancel; CTRL_CLOSE_EVENT and the like on Windows).
var signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// The temporary files of every Set, the runs that take the signals
// (NotifyContext), and the signal handler, installed while there are
// either.
var (
	liveMu sync.Mutex
	live   = map[*Writer]bool{}
	owners = map[*owner]bool{}
	sigCh  chan os.Signal
	// interrupted: a run's context was cancelled by a signal and the run
	// has not stopped yet; no Set commits meanwhile.
	interrupted int
)

// owner is a run that takes the signals: NotifyContext's context.
type owner struct {
	cancel    context.CancelCauseFunc
	cancelled bool
}

// SignalError is the cause of a context NotifyContext cancelled: the
// signal that came. errors.Is(err, ErrInterrupted) holds for it.
type SignalError struct {
	Signal os.Signal
}

func (e SignalError) Error() string { return "interrupted (" + e.Signal.String() + ")" }

// Is makes a SignalError an ErrInterrupted.
func (e SignalError) Is(target error) bool { return target == ErrInterrupted }

// ExitCode is the status a shell gives a process killed by the signal:
// 128 + its number (130 for SIGINT, 143 for SIGTERM).
func (e SignalError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// ErrInterrupted is what Commit returns while the run is interrupted,
// and what a SignalError is.
var ErrInterrupted = errors.New("interrupted")

// NotifyContext hands the interrupt signals to a run: the returned
// context is cancelled, with a SignalError as its cause (context.Cause),
// on the first SIGINT or SIGTERM (os.Interrupt on Windows), and from
// then until stop no Set commits (Commit returns ErrInterrupted), so
// that the run stops at its next check, removes its temporary files as it
// returns, and writes nothing half-done. A second signal does not wait
// for the run: it removes every live temporary file and exits at once
// with 128 + the signal. stop ends the hand-off (the default handling,
// below, is back) and must be called when the run is over.
//
// Without a NotifyContext in use, a signal while temporary files exist
// removes them and exits at once (the window's way: it has no run to
// hand the signal to).
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	o := &owner{cancel: cancel}
	liveMu.Lock()
	owners[o] = true
	install()
	liveMu.Unlock()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			liveMu.Lock()
			delete(owners, o)
			if o.cancelled {
				interrupted--
			}
			uninstall()
			liveMu.Unlock()
			cancel(context.Canceled)
		})
	}
}

// install starts the signal handler (liveMu held).
func install() {
	if sigCh == nil {
		sigCh = make(chan os.Signal, 2)
		signal.Notify(sigCh, signals...)
		go onSignal(sigCh)
	}
}

// uninstall stops the handler when nothing needs it (liveMu held).
func uninstall() {
	if len(live) == 0 && len(owners) == 0 && sigCh != nil {
		signal.Stop(sigCh)
		close(sigCh)
		sigCh = nil
	}
}

// createTracked creates w's temporary file exclusively and tracks it, as
// one step for the signal handler: a signal in between cannot leave the
// file behind.
func createTracked(w *Writer, perm os.FileMode) error {
	liveMu.Lock()
	defer liveMu.Unlock()
	f, err := os.OpenFile(w.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	w.f = f
	live[w] = true
	install()
	return nil
}

func untrack(w *Writer) {
	liveMu.Lock()
	defer liveMu.Unlock()
	delete(live, w)
	uninstall()
}

// checkInterrupted is Commit's check: ErrInterrupted while a run is
// interrupted.
func checkInterrupted() error {
	liveMu.Lock()
	defer liveMu.Unlock()
	if interrupted > 0 {
		return ErrInterrupted
	}
	return nil
}

// onSignal hands a signal to the runs that take it (NotifyContext); a
// signal no run takes (none, or all of them cancelled already) removes
// every live temporary file and exits as the signal would have: 130 for
// SIGINT, 143 for SIGTERM.
func onSignal(ch chan os.Signal) {
	for sig := range ch {
		liveMu.Lock()
		handed := false
		for o := range owners {
			if !o.cancelled {
				o.cancelled, handed = true, true
				interrupted++
				o.cancel(SignalError{Signal: sig})
			}
		}
		if handed {
			liveMu.Unlock()
			continue
		}
		// Held until exit: no new temporary file after this.
		for w := range live {
			w.f.Close() // Windows removes no file that is still open
			os.Remove(w.tmp)
		}
		os.Exit(SignalError{Signal: sig}.ExitCode())
	}
}

// Live returns the number of temporary files not yet committed or
// removed, in all Sets.
func Live() int {
	liveMu.Lock()
	defer liveMu.Unlock()
	return len(live)
}

// interruptedError says which output was not put in place.
func interruptedError(path string) error {
	return fmt.Errorf("write %s: %w", path, ErrInterrupted)
}
