package speaker

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	gobgplog "github.com/osrg/gobgp/v3/pkg/log"
)

// slogLogger hands GoBGP's log to edgeovn's slog. GoBGP says at Info what edgeovn says
// itself in fewer words (peer state, routes), so its Info and Debug go to Debug.
type slogLogger struct {
	log   *slog.Logger
	level atomic.Uint32
}

var _ gobgplog.Logger = (*slogLogger)(nil)

func newLogger(log *slog.Logger) *slogLogger {
	l := &slogLogger{log: log.With("component", "gobgp")}
	l.level.Store(uint32(gobgplog.InfoLevel))
	return l
}

func (l *slogLogger) attrs(fields gobgplog.Fields) []any {
	out := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		out = append(out, k, v)
	}
	return out
}

// Panic and Fatal are GoBGP's broken invariants: its own logger would end the process.
func (l *slogLogger) Panic(msg string, f gobgplog.Fields) {
	panic(fmt.Sprintf("gobgp: %s %v", msg, f))
}
func (l *slogLogger) Fatal(msg string, f gobgplog.Fields) {
	panic(fmt.Sprintf("gobgp: %s %v", msg, f))
}
func (l *slogLogger) Error(msg string, f gobgplog.Fields) { l.log.Error(msg, l.attrs(f)...) }
func (l *slogLogger) Warn(msg string, f gobgplog.Fields)  { l.log.Warn(msg, l.attrs(f)...) }
func (l *slogLogger) Info(msg string, f gobgplog.Fields)  { l.debug(msg, f) }
func (l *slogLogger) Debug(msg string, f gobgplog.Fields) { l.debug(msg, f) }

func (l *slogLogger) debug(msg string, f gobgplog.Fields) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug(msg, l.attrs(f)...)
	}
}

func (l *slogLogger) SetLevel(level gobgplog.LogLevel) { l.level.Store(uint32(level)) }
func (l *slogLogger) GetLevel() gobgplog.LogLevel      { return gobgplog.LogLevel(l.level.Load()) }
