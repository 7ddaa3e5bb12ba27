package pluginhost

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
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// The hook server. A hook process lives a few milliseconds; launching a
// plugin (handshake, TLS, Info, Configure) costs it 15-25 ms more. So the
// first hook that needs a plugin starts, detached, one nexus process per
// project that keeps the subscribed plugins running, and later hook
// processes hand it their event over a Unix socket. The socket lives in a
// private folder of the user's runtime (or cache) directory, never in the
// project, where it could be committed or reached by another user. The
// server exits after an idle period; a hook that finds no server, or one
// that does not answer, handles its event in-process as before.

// DefaultHookServerIdle is how long a hook server waits for a request
// before it stops its plugins and exits.
const DefaultHookServerIdle = 10 * time.Minute

const (
	hookProto      = 1 // version of the exchange below
	socketName     = "hooks.sock"
	serverLockName = "server.lock"
	// ServerLogName is the hook server's own log, in its runtime folder.
	ServerLogName = "server.log"
	// hookAckTimeout bounds how long a hook waits for the server to
	// acknowledge a request before it handles the event itself.
	hookAckTimeout = 250 * time.Millisecond
	// maxHookMessage bounds one request or reply (a hook payload is at most
	// 10 MiB).
	maxHookMessage = 16 << 20
	maxSocketPath  = 100 // sun_path holds 104-108 bytes depending on the OS
)

// ErrNoHookServer means no hook server listens for the project: start one.
var ErrNoHookServer = errors.New("no hook server is running for this project")

// ErrHookServerRunning is returned by HookServer.Run when another server
// already holds the project's runtime folder.
var ErrHookServerRunning = errors.New("a hook server is already running for this project")

// hookRequest is one event sent by a hook process.
type hookRequest struct {
	Proto int `json:"proto"`
	// Exe identifies the hook's nexus executable: a server started from
	// another build steps down, so an upgrade takes effect at once.
	Exe     string      `json:"exe"`
	Options wireOptions `json:"options"`
	Event   *sdk.Event  `json:"event"`
}

// hookReply is the server's answer: first an acknowledgement, then the
// result (or why there is none).
type hookReply struct {
	Ack    bool            `json:"ack,omitempty"`
	Result *DispatchResult `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// wireOptions are the parts of Options a hook process decides from its
// configuration; the server keeps a manager per distinct set.
type wireOptions struct {
	ProjectDir    string                       `json:"project_dir"`
	UserDir       string                       `json:"user_dir"`
	NoUserPlugins bool                         `json:"no_user_plugins,omitempty"`
	Paths         []string                     `json:"paths,omitempty"`
	Settings      map[string]map[string]string `json:"settings,omitempty"`
	Disabled      []string                     `json:"disabled,omitempty"`
}

func wireOf(o Options) wireOptions {
	return wireOptions{ProjectDir: o.ProjectDir, UserDir: o.userDir(), NoUserPlugins: o.NoUserPlugins,
		Paths: o.Paths, Settings: o.Settings, Disabled: o.Disabled}
}

func (w wireOptions) apply(base Options) Options {
	base.ProjectDir, base.UserDir, base.NoUserPlugins = w.ProjectDir, w.UserDir, w.NoUserPlugins || w.UserDir == ""
	base.Paths, base.Settings, base.Disabled = w.Paths, w.Settings, w.Disabled
	base.OnlyEvent, base.OnlyTool = "", ""
	return base
}

// RuntimeDir is the private folder of a project's hook server:
// $XDG_RUNTIME_DIR/nexus/<key>, else <user cache dir>/nexus/run/<key>
// (else, when that path is too long for a socket, <tmp>/nexus-<uid>/<key>),
// where key is derived from the project's absolute path. It is not created
// here.
func RuntimeDir(project string) (string, error) {
	abs, err := filepath.Abs(project)
	if err != nil {
		return "", fmt.Errorf("hook server folder: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	key := hex.EncodeToString(sum[:12])
	var base string
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		base = filepath.Join(x, "nexus")
	} else if c, err := os.UserCacheDir(); err == nil {
		base = filepath.Join(c, "nexus", "run")
	}
	if base == "" || len(filepath.Join(base, key, socketName)) > maxSocketPath {
		base = filepath.Join(os.TempDir(), "nexus-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(base, key), nil
}

// ensurePrivateDir creates dir (and missing parents) with mode 0700 and
// checks that it and its parent belong to this user and admit nobody else.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hook server folder: %w", err)
	}
	return checkPrivateDir(dir)
}

// checkPrivateDir refuses a folder (or its parent) that is a symlink,
// belongs to another user, or that others may enter or write.
func checkPrivateDir(dir string) error {
	for _, d := range []string{dir, filepath.Dir(dir)} {
		st, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			return fmt.Errorf("hook server folder %s is not a directory", d)
		}
		if owner, ok := fileOwner(st); ok && owner != os.Getuid() {
			return fmt.Errorf("hook server folder %s belongs to uid %d, not to you (uid %d); remove it", d, owner, os.Getuid())
		}
		mask := os.FileMode(0o022) // the parent may be shared read-only
		if d == dir {
			mask = 0o077
		}
		if st.Mode().Perm()&mask != 0 {
			return fmt.Errorf("hook server folder %s has mode %o; it must not be open to other users (chmod 700 %s)", d, st.Mode().Perm(), d)
		}
	}
	return nil
}

// ExeIdentity identifies the running executable by path, size and
// modification time ("" when unknown).
func ExeIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s|%d|%d", exe, st.Size(), st.ModTime().UnixNano())
}

// SpawnHookServer starts exe with args as a detached process (its own
// session, stdin and stdout on /dev/null, stderr appended to the server log
// in dir) and does not wait for it.
func SpawnHookServer(exe string, args []string, dir string) error {
	if err := ensurePrivateDir(dir); err != nil {
		return err
	}
	logPath := filepath.Join(dir, ServerLogName)
	if st, err := os.Stat(logPath); err == nil && st.Size() > 1<<20 {
		_ = os.Truncate(logPath, 0)
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("hook server log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(exe, args...)
	cmd.Dir = "/"
	cmd.Stderr = logFile
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the hook server: %w", err)
	}
	return cmd.Process.Release()
}

// DispatchViaServer hands ev to the hook server in dir and returns its
// result. budget bounds the wait once the server has acknowledged (the sum
// of the subscribers' timeouts, see Subscribed). ErrNoHookServer means none
// is running; any other error means the server is unusable (it did not
// acknowledge in time, stepped down, or failed): handle the event
// in-process.
func DispatchViaServer(ctx context.Context, dir string, o Options, ev *sdk.Event, exe string, budget time.Duration) (*DispatchResult, error) {
	if err := checkPrivateDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoHookServer
		}
		return nil, err
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, hookAckTimeout)
	conn, err := d.DialContext(dctx, "unix", filepath.Join(dir, socketName))
	cancel()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isConnRefused(err) {
			return nil, ErrNoHookServer
		}
		return nil, fmt.Errorf("hook server: %w", err)
	}
	defer conn.Close()
	// Leaving ctx (a signal, the host's timeout) ends the exchange; closing
	// the connection tells the server to cancel the dispatch.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	req, err := json.Marshal(hookRequest{Proto: hookProto, Exe: exe, Options: wireOf(o), Event: ev})
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(hookAckTimeout))
	if _, err := conn.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("hook server: send: %w", err)
	}
	r := bufio.NewReader(io.LimitReader(conn, maxHookMessage))
	var ack hookReply
	if err := readReply(r, &ack); err != nil {
		return nil, fmt.Errorf("hook server did not acknowledge: %w", err)
	}
	if !ack.Ack {
		return nil, fmt.Errorf("hook server refused the event: %s", ack.Error)
	}
	_ = conn.SetDeadline(time.Now().Add(budget + time.Second))
	var rep hookReply
	if err := readReply(r, &rep); err != nil {
		return nil, fmt.Errorf("hook server: %w", err)
	}
	if rep.Error != "" || rep.Result == nil {
		return nil, fmt.Errorf("hook server: %s", rep.Error)
	}
	for i := range rep.Result.Outcomes {
		if o := &rep.Result.Outcomes[i]; o.Error != "" {
			o.Err = errors.New(o.Error)
		}
	}
	return rep.Result, nil
}

func readReply(r *bufio.Reader, v *hookReply) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// HookServer keeps a project's event plugins running for its hook processes.
type HookServer struct {
	// Dir is the project's RuntimeDir.
	Dir string
	// Base holds what every manager of the server uses: logger, digest
	// cache, built-in manifests, timeouts. Discovery and settings come with
	// each request, from the hook's own configuration.
	Base Options
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
	m     *Manager
	key   string
	users sync.WaitGroup
}

// Run serves until ctx ends, the server has been idle for Idle, or a hook
// of another nexus build asks; then it stops every plugin and returns nil.
// It returns ErrHookServerRunning when another server holds Dir.
func (s *HookServer) Run(ctx context.Context) error {
	if s.Idle <= 0 {
		s.Idle = DefaultHookServerIdle
	}
	s.log = s.Base.Logger
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	s.quit = make(chan struct{})
	if err := ensurePrivateDir(s.Dir); err != nil {
		return err
	}
	lock := flock.New(filepath.Join(s.Dir, serverLockName))
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("hook server lock: %w", err)
	}
	if !locked {
		return ErrHookServerRunning
	}
	defer lock.Unlock()
	sock := filepath.Join(s.Dir, socketName)
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
	r := bufio.NewReader(io.LimitReader(conn, maxHookMessage))
	line, err := r.ReadBytes('\n')
	if err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	enc := json.NewEncoder(conn)
	var req hookRequest
	if err := json.Unmarshal(line, &req); err != nil || req.Event == nil {
		_ = enc.Encode(hookReply{Error: "malformed request"})
		return
	}
	if req.Proto != hookProto || req.Exe != s.Exe {
		s.log.Info("hook server: a hook of another nexus build called; stepping down", "theirs", req.Exe, "ours", s.Exe)
		_ = enc.Encode(hookReply{Error: "this hook server runs another nexus build; it is stepping down"})
		s.stepDown()
		return
	}
	gen, err := s.acquire(req.Options)
	if err != nil {
		_ = enc.Encode(hookReply{Error: err.Error()})
		return
	}
	defer gen.users.Done()
	if err := enc.Encode(hookReply{Ack: true}); err != nil {
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
	_ = enc.Encode(hookReply{Result: res})
}

// acquire returns the manager for a hook's options, opening a new one when
// the options, a manifest or a plugin executable changed since the current
// one was opened. The caller must call users.Done.
func (s *HookServer) acquire(w wireOptions) (*generation, error) {
	opts := w.apply(s.Base)
	files := filesKey(opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.gen; g != nil && g.key == genKey(w, files, g.m) {
		g.users.Add(1)
		return g, nil
	}
	m, err := Open(opts)
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
func filesKey(o Options) string {
	files, _ := candidates(o.ProjectDir, o.userDir(), o.Paths)
	h := sha256.New()
	for _, c := range files {
		fmt.Fprintf(h, "%s\x00%s\x00", c.file, statKey(c.file))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// genKey combines a hook's options, the manifests and the executables of
// the plugins m holds.
func genKey(w wireOptions, files string, m *Manager) string {
	h := sha256.New()
	b, _ := json.Marshal(w)
	h.Write(b)
	h.Write([]byte(files))
	for _, man := range m.Manifests() {
		fmt.Fprintf(h, "\x00%s", statKey(man.ExecutablePath()))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func statKey(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	if id, ok := identity(st); ok {
		return fmt.Sprintf("%d/%d/%d/%d/%d", id.Dev, id.Ino, id.Size, id.Mtime, id.Ctime)
	}
	return fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
}
