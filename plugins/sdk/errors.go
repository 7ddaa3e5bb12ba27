package sdk

import (
	"errors"
	"fmt"
)

// The errors a call to a plugin can end with, as nexus (and sdktest's
// client) reports them. errors.Is also matches context.DeadlineExceeded
// and context.Canceled when the call's deadline passed or it was
// cancelled.
var (
	// ErrUnavailable means the plugin process could not be reached: it
	// crashed, was killed or exited. nexus starts a fresh process on the
	// next call.
	ErrUnavailable = errors.New("plugin is unavailable (its process crashed, exited or was killed)")

	// ErrUnimplemented means the plugin does not implement the call: a Go
	// plugin left it to UnimplementedPlugin, another plugin answered
	// gRPC's UNIMPLEMENTED. A plugin may return it (wrapped or not) itself.
	ErrUnimplemented = errors.New("the plugin does not implement this call")
)

// RemoteError is a failure the plugin reported for one call.
type RemoteError struct {
	Method  string // the call, e.g. "CallTool check"
	Message string // the plugin's own message
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("plugin %s failed: %s", e.Method, e.Message)
}
