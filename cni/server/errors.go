package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// cniError maps err, which happened while doing what msg says, to a CNI error: timeouts and
// cancellations can be retried, bad namespaces and requests cannot.
func cniError(msg string, err error) *protocol.Error {
	code := protocol.CodeInternal
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		code = protocol.CodeTryAgainLater
	case errors.Is(err, podnet.ErrInvalidNetns):
		code = protocol.CodeInvalidNetns
	case errors.Is(err, podnet.ErrInvalidRequest):
		code = protocol.CodeInvalidNetworkConfig
	}
	return &protocol.Error{Code: code, Msg: msg, Details: err.Error()}
}

// retryable is for failures of dependencies that come back on their own (OVS, OVN): the
// runtime retries on code 11.
func retryable(msg string, err error) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeTryAgainLater, Msg: msg, Details: err.Error()}
}

func badRequest(format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeInvalidEnvironment, Msg: fmt.Sprintf(format, args...)}
}
