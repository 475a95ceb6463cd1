package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// maxRequest bounds a request body: real requests are well under a kilobyte, and GC's list
// of valid attachments takes about 100 bytes per pod, so 1 MiB is ten thousand pods.
const maxRequest = 1 << 20

func (s *Server) serveCNI(w http.ResponseWriter, r *http.Request) {
	if perr := checkPeer(r.Context()); perr != nil {
		s.cfg.Log.Warn("refused cni request", "err", perr.Msg, "details", perr.Details)
		writeResponse(w, protocol.Response{Error: perr})
		return
	}
	req, err := decodeRequest(http.MaxBytesReader(w, r.Body, maxRequest))
	if err != nil {
		msg := "decode cni request"
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			msg = fmt.Sprintf("cni request refused: larger than %d bytes", maxRequest)
		}
		writeResponse(w, protocol.Response{Error: &protocol.Error{
			Code: protocol.CodeDecodingFailure, Msg: msg, Details: err.Error()}})
		return
	}
	resp := s.dispatch(r.Context(), req)
	if resp.Error != nil && s.draining.Load() && r.Context().Err() != nil {
		// It failed because the daemon is stopping: no answer, so that the plugin retries
		// against the next daemon rather than report the failure to the runtime.
		panic(http.ErrAbortHandler)
	}
	writeResponse(w, resp)
}

// decodeRequest reads exactly one request: a field the protocol does not have, or anything
// after the object, is refused by name rather than ignored (a plugin and daemon of different
// versions must not silently drop what the other said).
func decodeRequest(body io.Reader) (protocol.PodRequest, error) {
	var req protocol.PodRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, fmt.Errorf("trailing data after the request object (at byte %d)", dec.InputOffset())
	}
	return req, nil
}

// dispatch serves one request and records its outcome: the metric, and a log line for a
// failed one (the runtime shows the error to nobody but the kubelet's events). STATUS failures
// are left to the health monitor, which logs each change once, not every 5 s.
func (s *Server) dispatch(ctx context.Context, req protocol.PodRequest) protocol.Response {
	start := time.Now()
	resp := s.serve(ctx, req)
	took := time.Since(start)
	var code uint
	if resp.Error != nil {
		code = resp.Error.Code
		if req.Command != protocol.CommandStatus {
			s.requestLog(req).Warn("cni request failed", "code", code, "err", resp.Error.Msg,
				"details", resp.Error.Details, "duration", took)
		}
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.ObserveCNI(req.Command, code, took)
	}
	return resp
}

// requestLog carries the keys every line about a request has: verb, pod, namespace, netns.
// ADD adds the subnet (and lsp, ip) once it knows them.
func (s *Server) requestLog(req protocol.PodRequest) *slog.Logger {
	return s.cfg.Log.With("verb", req.Command, "pod", req.PodName, "namespace", req.PodNamespace, "netns", req.Netns)
}

func (s *Server) serve(ctx context.Context, req protocol.PodRequest) protocol.Response {
	if req.IPAMOnly && req.Command != protocol.CommandStatus {
		return s.serveIPAM(ctx, req)
	}
	switch req.Command {
	case protocol.CommandAdd:
		res, perr := s.add(ctx, req)
		return protocol.Response{Add: res, Error: perr}
	case protocol.CommandDel:
		return protocol.Response{Error: s.del(ctx, req)}
	case protocol.CommandCheck:
		return protocol.Response{Error: s.check(ctx, req)}
	case protocol.CommandStatus:
		return protocol.Response{Error: s.status(ctx)}
	case protocol.CommandGC:
		return protocol.Response{Error: s.gc(ctx, req)}
	}
	return protocol.Response{Error: &protocol.Error{
		Code: protocol.CodeInvalidEnvironment, Msg: fmt.Sprintf("unknown cni command %q", req.Command)}}
}

func (s *Server) serveIPAM(ctx context.Context, req protocol.PodRequest) protocol.Response {
	switch req.Command {
	case protocol.CommandAdd:
		res, perr := s.ipamAdd(ctx, req)
		return protocol.Response{Add: res, Error: perr}
	case protocol.CommandDel, protocol.CommandCheck, protocol.CommandGC:
		return protocol.Response{Error: s.ipamOther(req)}
	}
	return protocol.Response{Error: &protocol.Error{
		Code: protocol.CodeInvalidEnvironment, Msg: fmt.Sprintf("unknown cni command %q", req.Command)}}
}

func writeResponse(w http.ResponseWriter, resp protocol.Response) {
	w.Header().Set("Content-Type", "application/json")
	if resp.Error != nil {
		w.WriteHeader(httpStatus(resp.Error.Code))
	}
	// The client may be gone already (its timeout); nothing useful is left to do then.
	_ = json.NewEncoder(w).Encode(resp)
}

// httpStatus mirrors a CNI code for people reading the socket with curl; the binary reads
// only the body.
func httpStatus(code uint) int {
	switch code {
	case protocol.CodeTryAgainLater, protocol.CodePluginNotAvailable, protocol.CodeLimitedConnectivity:
		return http.StatusServiceUnavailable
	case protocol.CodeInvalidEnvironment, protocol.CodeDecodingFailure, protocol.CodeInvalidNetworkConfig, protocol.CodeInvalidNetns:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
