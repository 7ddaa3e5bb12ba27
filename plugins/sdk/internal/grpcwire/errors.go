package grpcwire

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// callError turns a gRPC failure into an error a person can read and a
// program can test: errors.Is works with sdk.ErrUnavailable,
// sdk.ErrUnimplemented, context.DeadlineExceeded and context.Canceled.
func callError(method string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("plugin %s: %w", method, err)
	}
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("plugin %s: %w: %s", method, sdk.ErrUnavailable, st.Message())
	case codes.DeadlineExceeded:
		return fmt.Errorf("plugin %s: no answer before the deadline: %w", method, context.DeadlineExceeded)
	case codes.Canceled:
		return fmt.Errorf("plugin %s: call cancelled: %w", method, context.Canceled)
	case codes.Unimplemented:
		return fmt.Errorf("plugin %s: %w", method, sdk.ErrUnimplemented)
	default:
		return &sdk.RemoteError{Method: method, Message: st.Message()}
	}
}

// statusOf is the plugin side of the mapping: context errors and
// sdk.ErrUnimplemented keep their meaning across the wire, a status made by
// the plugin passes through, and anything else becomes Unknown with the
// error's text.
func statusOf(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, sdk.ErrUnimplemented):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	default:
		return status.Error(codes.Unknown, err.Error())
	}
}
