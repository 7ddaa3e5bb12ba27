package sdk

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrUnavailable means the plugin process could not be reached: it crashed,
// was killed or exited. nexus starts a fresh process on the next call.
var ErrUnavailable = errors.New("plugin is unavailable (its process crashed, exited or was killed)")

// ErrUnimplemented means the plugin does not implement the call, usually
// because it was built against an older SDK.
var ErrUnimplemented = errors.New("plugin does not implement this call (rebuild it against the current nexus SDK)")

// RemoteError is a failure the plugin reported for one call.
type RemoteError struct {
	Method  string // the call, e.g. "CallTool check"
	Message string // the plugin's own message
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("plugin %s failed: %s", e.Method, e.Message)
}

// callError turns a gRPC failure into an error a person can read and a
// program can test: errors.Is works with ErrUnavailable, ErrUnimplemented,
// context.DeadlineExceeded and context.Canceled.
func callError(method string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("plugin %s: %w", method, err)
	}
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("plugin %s: %w: %s", method, ErrUnavailable, st.Message())
	case codes.DeadlineExceeded:
		return fmt.Errorf("plugin %s: no answer before the deadline: %w", method, context.DeadlineExceeded)
	case codes.Canceled:
		return fmt.Errorf("plugin %s: call cancelled: %w", method, context.Canceled)
	case codes.Unimplemented:
		return fmt.Errorf("plugin %s: %w", method, ErrUnimplemented)
	default:
		return &RemoteError{Method: method, Message: st.Message()}
	}
}

// statusOf is the plugin side of the mapping: context errors keep their
// meaning across the wire, a status made by the plugin passes through, and
// anything else becomes Unknown with the error's text.
func statusOf(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	default:
		return status.Error(codes.Unknown, err.Error())
	}
}
