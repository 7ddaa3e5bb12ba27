package pluginhost

import (
	"os"
	"os/signal"
	"syscall"
)

// ShutdownOnSignal stops every plugin when the process receives SIGINT,
// SIGTERM or SIGHUP, then restores the signal's default action and raises
// it again, so the process ends exactly as it would have. Use it in a
// process that has no signal handling of its own (a hook run); a process
// that shuts down gracefully on signals should call Close on its way out
// instead. On Linux a SIGKILLed host takes its plugins with it regardless
// (parent-death signal). The returned stop undoes the handler.
func (m *Manager) ShutdownOnSignal() (stop func()) {
	ch := make(chan os.Signal, 1)
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	signal.Notify(ch, sigs...)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			_ = m.Close()
			signal.Reset(sig)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(sig)
			}
		case <-quit:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(quit)
	}
}
