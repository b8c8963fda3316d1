package outfile

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The temporary files of every Set, and the signal handler that removes
// them, installed while there are any.
var (
	liveMu sync.Mutex
	live   = map[*Writer]bool{}
	sigCh  chan os.Signal
)

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
	if sigCh == nil {
		sigCh = make(chan os.Signal, 1)
		signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
		go onSignal(sigCh)
	}
	return nil
}

func untrack(w *Writer) {
	liveMu.Lock()
	defer liveMu.Unlock()
	delete(live, w)
	if len(live) == 0 && sigCh != nil {
		signal.Stop(sigCh)
		close(sigCh)
		sigCh = nil
	}
}

// onSignal removes every live temporary file and exits as the signal
// would have: 130 for SIGINT, 143 for SIGTERM.
func onSignal(ch chan os.Signal) {
	sig, ok := <-ch
	if !ok {
		return
	}
	liveMu.Lock() // held until exit: no new temporary file after this
	for w := range live {
		w.f.Close() // Windows removes no file that is still open
		os.Remove(w.tmp)
	}
	code := 130
	if sig == syscall.SIGTERM {
		code = 143
	}
	os.Exit(code)
}

// Live returns the number of temporary files not yet committed or
// removed, in all Sets.
func Live() int {
	liveMu.Lock()
	defer liveMu.Unlock()
	return len(live)
}
