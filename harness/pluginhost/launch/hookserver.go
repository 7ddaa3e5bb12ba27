package launch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// ErrHookServerRunning is returned by HookServer.Run when another server
// already holds the project's runtime folder.
var ErrHookServerRunning = errors.New("a hook server is already running for this project")

// HookServer keeps a project's event plugins running for its hook processes.
type HookServer struct {
	// Dir is the project's RuntimeDir.
	Dir string
	// Base holds what every manager of the server uses: logger, digest
	// cache, built-in manifests, timeouts. Discovery and settings come with
	// each request, from the hook's own configuration.
	Base pluginhost.Options
	// Idle: exit after this long without a request (DefaultHookServerIdle).
	Idle time.Duration
	// Exe is ExeIdentity() of this program; a hook of another build makes
	// the server step down.
	Exe string
	// Ready, when set, is called once the socket accepts connections.
	Ready func()

	log      hclog.Logger
	mu       sync.Mutex
	gen      *generation
	bg       sync.WaitGroup // connections, retiring managers
	active   atomic.Int32
	lastUsed atomic.Int64
	quit     chan struct{}
	quitOnce sync.Once
}

// generation is one manager and the configuration it was opened for.
type generation struct {
	m     *pluginhost.Manager
	key   string
	users sync.WaitGroup
}

// Run serves until ctx ends, the server has been idle for Idle, or a hook
// of another nexus build asks; then it stops every plugin and returns nil.
// It returns ErrHookServerRunning when another server holds Dir.
func (s *HookServer) Run(ctx context.Context) error {
	if s.Idle <= 0 {
		s.Idle = pluginhost.DefaultHookServerIdle
	}
	s.log = hclogOf(s.Base.Logger)
	if s.Base.Logger == nil {
		s.log = hclog.NewNullLogger()
	}
	s.quit = make(chan struct{})
	if err := pluginhost.EnsurePrivateDir(s.Dir); err != nil {
		return err
	}
	lock := flock.New(filepath.Join(s.Dir, pluginhost.ServerLockName))
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("hook server lock: %w", err)
	}
	if !locked {
		return ErrHookServerRunning
	}
	defer lock.Unlock()
	sock := filepath.Join(s.Dir, pluginhost.SocketName)
	_ = os.Remove(sock) // left by a server that was killed
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return fmt.Errorf("hook server: %w", err)
	}
	// The folder is already private; the socket is owner-only as well.
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("hook server: %w", err)
	}
	s.lastUsed.Store(time.Now().UnixNano())
	go s.watch(ctx, ln)
	s.log.Info("hook server listening", "socket", sock, "pid", os.Getpid())
	if s.Ready != nil {
		s.Ready()
	}
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			break
		}
		if !peerIsOwner(conn) {
			s.log.Warn("hook server: refused a connection from another user")
			conn.Close()
			continue
		}
		s.active.Add(1)
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			defer s.active.Add(-1)
			defer s.lastUsed.Store(time.Now().UnixNano())
			s.serve(ctx, conn)
		}()
	}
	s.bg.Wait()
	s.mu.Lock()
	gen := s.gen
	s.gen = nil
	s.mu.Unlock()
	if gen != nil {
		gen.m.Close()
	}
	s.log.Info("hook server stopped")
	return nil
}

// watch closes the listener when the server should stop.
func (s *HookServer) watch(ctx context.Context, ln *net.UnixListener) {
	tick := min(max(s.Idle/10, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-s.quit:
		case <-t.C:
			idle := time.Since(time.Unix(0, s.lastUsed.Load()))
			if s.active.Load() > 0 || idle < s.Idle {
				continue
			}
			s.log.Info("hook server idle; exiting", "idle", idle.Round(time.Second))
		}
		ln.Close()
		return
	}
}

func (s *HookServer) stepDown() { s.quitOnce.Do(func() { close(s.quit) }) }

// serve answers one hook process.
func (s *HookServer) serve(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(io.LimitReader(conn, pluginhost.MaxHookMessage))
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	enc := json.NewEncoder(conn)
	var req pluginhost.HookRequest
	if err := json.Unmarshal(line, &req); err != nil || req.Event == nil {
		_ = enc.Encode(pluginhost.HookReply{Error: "malformed request"})
		return
	}
	if req.Proto != pluginhost.HookProto || req.Exe != s.Exe {
		s.log.Info("hook server: a hook of another nexus build called; stepping down", "theirs", req.Exe, "ours", s.Exe)
		_ = enc.Encode(pluginhost.HookReply{Error: "this hook server runs another nexus build; it is stepping down"})
		s.stepDown()
		return
	}
	gen, err := s.acquire(req.Options)
	if err != nil {
		_ = enc.Encode(pluginhost.HookReply{Error: err.Error()})
		return
	}
	defer gen.users.Done()
	if err := enc.Encode(pluginhost.HookReply{Ack: true}); err != nil {
		return
	}
	// The hook closing its end (its host's timeout, a signal) cancels the
	// dispatch.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		var b [1]byte
		_, _ = conn.Read(b[:])
		cancel()
	}()
	res := gen.m.Dispatch(cctx, req.Event)
	_ = enc.Encode(pluginhost.HookReply{Result: res})
}

// acquire returns the manager for a hook's options, opening a new one when
// the options, a manifest or a plugin executable changed since the current
// one was opened. The caller must call users.Done.
func (s *HookServer) acquire(w pluginhost.WireOptions) (*generation, error) {
	opts := w.Apply(s.Base)
	opts.Backend = Backend
	files := filesKey(opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.gen; g != nil && g.key == genKey(w, files, g.m) {
		g.users.Add(1)
		return g, nil
	}
	m, err := pluginhost.Open(opts)
	if err != nil {
		return nil, err
	}
	old := s.gen
	s.gen = &generation{m: m, key: genKey(w, files, m)}
	s.gen.users.Add(1)
	if old != nil {
		s.log.Info("hook server: plugins or configuration changed; reloading")
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			old.users.Wait()
			old.m.Close()
		}()
	}
	return s.gen, nil
}

// filesKey identifies every manifest discovery would read.
func filesKey(o pluginhost.Options) string {
	h := sha256.New()
	for _, f := range pluginhost.ManifestFiles(o) {
		fmt.Fprintf(h, "%s\x00%s\x00", f, pluginhost.FileVersion(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// genKey combines a hook's options, the manifests and the executables of
// the plugins m holds.
func genKey(w pluginhost.WireOptions, files string, m *pluginhost.Manager) string {
	h := sha256.New()
	b, _ := json.Marshal(w)
	h.Write(b)
	h.Write([]byte(files))
	for _, man := range m.Manifests() {
		fmt.Fprintf(h, "\x00%s", pluginhost.FileVersion(man.ExecutablePath()))
	}
	return hex.EncodeToString(h.Sum(nil))
}
