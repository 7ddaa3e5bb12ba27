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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

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
	// HookProto versions the exchange below.
	HookProto = 2
	// SocketName and ServerLockName are the hook server's files in its
	// runtime folder.
	SocketName     = "hooks.sock"
	ServerLockName = "server.lock"
	// ServerLogName is the hook server's own log, in its runtime folder.
	ServerLogName = "server.log"
	// hookAckTimeout bounds how long a hook waits for the server to
	// acknowledge a request before it handles the event itself.
	hookAckTimeout = 250 * time.Millisecond
	// MaxHookMessage bounds one request or reply (a hook payload is at most
	// 10 MiB).
	MaxHookMessage = 16 << 20
	maxSocketPath  = 100 // sun_path holds 104-108 bytes depending on the OS
)

// ErrNoHookServer means no hook server listens for the project: start one.
var ErrNoHookServer = errors.New("no hook server is running for this project")

// HookRequest is one event a hook process sends to its project's hook
// server (package launch serves them).
type HookRequest struct {
	Proto int `json:"proto"`
	// Exe identifies the hook's nexus executable: a server started from
	// another build steps down, so an upgrade takes effect at once.
	Exe     string      `json:"exe"`
	Options WireOptions `json:"options"`
	Event   *sdk.Event  `json:"event"`
}

// HookReply is the server's answer: first an acknowledgement, then the
// result (or why there is none).
type HookReply struct {
	Ack    bool            `json:"ack,omitempty"`
	Result *DispatchResult `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// WireOptions are the parts of Options that travel to another process
// (the hook server, the plugin host): discovery, settings, built-in
// manifests and limits. Loggers, backends and OnlyEvent stay behind.
type WireOptions struct {
	ProjectDir    string                       `json:"project_dir"`
	UserDir       string                       `json:"user_dir"`
	NoUserPlugins bool                         `json:"no_user_plugins,omitempty"`
	Paths         []string                     `json:"paths,omitempty"`
	Settings      map[string]map[string]string `json:"settings,omitempty"`
	Disabled      []string                     `json:"disabled,omitempty"`
	Reserved      map[string]string            `json:"reserved,omitempty"`
	ReservedPfx   []string                     `json:"reserved_prefixes,omitempty"`
	Builtin       []*WireManifest              `json:"builtin,omitempty"`
	DisableMTLS   bool                         `json:"disable_mtls,omitempty"`
	StartTimeout  time.Duration                `json:"start_timeout,omitempty"`
	ToolTimeout   time.Duration                `json:"tool_timeout,omitempty"`
	DigestCache   string                       `json:"digest_cache,omitempty"`
	DataRoot      string                       `json:"data_root,omitempty"`
	DataAnchor    string                       `json:"data_anchor,omitempty"`
}

// Wire returns what of o travels to another process.
func (o Options) Wire() WireOptions {
	w := WireOptions{ProjectDir: o.ProjectDir, UserDir: o.userDir(), NoUserPlugins: o.NoUserPlugins,
		Paths: o.Paths, Settings: o.Settings, Disabled: o.Disabled, DisableMTLS: o.DisableMTLS,
		Reserved: o.Reserved, ReservedPfx: o.ReservedPrefixes,
		StartTimeout: o.StartTimeout, ToolTimeout: o.ToolTimeout, DigestCache: o.DigestCache, DataRoot: o.DataRoot, DataAnchor: o.DataAnchor}
	for _, b := range o.Builtin {
		w.Builtin = append(w.Builtin, WireOf(b))
	}
	return w
}

// Apply sets the travelling options on base (which keeps its logger and
// backend) and clears OnlyEvent and OnlyTool.
func (w WireOptions) Apply(base Options) Options {
	base.ProjectDir, base.UserDir, base.NoUserPlugins = w.ProjectDir, w.UserDir, w.NoUserPlugins || w.UserDir == ""
	base.Paths, base.Settings, base.Disabled = w.Paths, w.Settings, w.Disabled
	base.Reserved, base.ReservedPrefixes = w.Reserved, w.ReservedPfx
	base.DataRoot, base.DataAnchor = w.DataRoot, w.DataAnchor
	base.DisableMTLS, base.StartTimeout, base.ToolTimeout, base.DigestCache = w.DisableMTLS, w.StartTimeout, w.ToolTimeout, w.DigestCache
	base.Builtin = nil
	for _, b := range w.Builtin {
		base.Builtin = append(base.Builtin, b.Unwrap())
	}
	base.OnlyEvent, base.OnlyTool = "", ""
	return base
}

// WireManifest is a manifest as it travels between processes, with the
// fields YAML never sets.
type WireManifest struct {
	*Manifest
	Path          string   `json:"path,omitempty"`
	Dir           string   `json:"dir,omitempty"`
	Source        Source   `json:"source,omitempty"`
	Args          []string `json:"args,omitempty"`
	BareToolNames bool     `json:"bare_tool_names,omitempty"`
}

// WireOf wraps a manifest for transport.
func WireOf(m *Manifest) *WireManifest {
	return &WireManifest{Manifest: m, Path: m.Path, Dir: m.Dir, Source: m.Source, Args: m.Args, BareToolNames: m.BareToolNames}
}

// Unwrap returns the transported manifest.
func (w *WireManifest) Unwrap() *Manifest {
	m := *w.Manifest
	m.Path, m.Dir, m.Source, m.Args, m.BareToolNames = w.Path, w.Dir, w.Source, w.Args, w.BareToolNames
	return &m
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
	if base == "" || len(filepath.Join(base, key, SocketName)) > maxSocketPath {
		base = filepath.Join(os.TempDir(), "nexus-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(base, key), nil
}

// EnsurePrivateDir creates dir (and missing parents) with mode 0700 and
// checks that it and its parent belong to this user and admit nobody else.
func EnsurePrivateDir(dir string) error {
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

// ExeIdentity identifies the running executable (see ProgramIdentity).
func ExeIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return ProgramIdentity(exe)
}

// ProgramIdentity identifies an executable by path and FileVersion ("" when
// it cannot be read): a hook server started from another build of the
// plugin host steps down.
func ProgramIdentity(path string) string {
	v := FileVersion(path)
	if v == "-" {
		return ""
	}
	return path + "|" + v
}

// FileVersion names the version of the file at path ("-" when it cannot be
// read): its device, inode, size, modification and change times where the
// platform gives them (an in-place edit whose modification time was put
// back still changes the change time), else its size and modification
// time.
func FileVersion(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	if id, ok := identity(st); ok {
		return fmt.Sprintf("%d/%d/%d/%d/%d", id.Dev, id.Ino, id.Size, id.Mtime, id.Ctime)
	}
	return fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
}

// SpawnHookServer starts exe with args as a detached process (its own
// session, stdin and stdout on /dev/null, stderr appended to the server log
// in dir) and does not wait for it.
func SpawnHookServer(exe string, args []string, dir string) error {
	if err := EnsurePrivateDir(dir); err != nil {
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
	conn, err := dialHookServer(ctx, filepath.Join(dir, SocketName))
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

	req, err := json.Marshal(HookRequest{Proto: HookProto, Exe: exe, Options: o.Wire(), Event: ev})
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(hookAckTimeout))
	if _, err := conn.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("hook server: send: %w", err)
	}
	r := bufio.NewReader(io.LimitReader(conn, MaxHookMessage))
	var ack HookReply
	if err := readReply(r, &ack); err != nil {
		return nil, fmt.Errorf("hook server did not acknowledge: %w", err)
	}
	if !ack.Ack {
		return nil, fmt.Errorf("hook server refused the event: %s", ack.Error)
	}
	_ = conn.SetDeadline(time.Now().Add(budget + time.Second))
	var rep HookReply
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

// hookConn is the connection to the hook server.
type hookConn interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
}

func readReply(r *bufio.Reader, v *HookReply) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}
