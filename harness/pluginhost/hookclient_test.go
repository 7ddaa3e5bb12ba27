package pluginhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPrivateDirChecks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "k")
	if err := EnsurePrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("mode %o", st.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := checkPrivateDir(link); err == nil {
		t.Fatal("a symlinked folder was accepted")
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := checkPrivateDir(dir); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("a group-readable folder: %v", err)
	}
}

func TestRuntimeDirIsPerProjectAndOutsideIt(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	a, _ := RuntimeDir("/src/a")
	b, _ := RuntimeDir("/src/b")
	if a == b || !strings.HasPrefix(a, "/run/user/1000/nexus/") || strings.HasPrefix(a, "/src/a") {
		t.Fatalf("%s %s", a, b)
	}
	t.Setenv("XDG_RUNTIME_DIR", "/"+strings.Repeat("x", 120))
	long, _ := RuntimeDir("/src/a")
	if len(filepath.Join(long, SocketName)) > maxSocketPath || !strings.HasPrefix(long, os.TempDir()) {
		t.Fatalf("long runtime dir: %s", long)
	}
}

// Options cross to the plugin host and the hook server with the fields
// YAML manifests never carry.
func TestWireOptionsRoundTrip(t *testing.T) {
	bi := &Manifest{Name: "store", Version: "1", ProtocolVersion: 2, Executable: "/bin/store", Args: []string{"serve", "store"},
		Dir: "/p", Source: SourceBuiltin, BareToolNames: true, ProjectDir: true, Env: []string{"NAURO_HOME"},
		Tools: []ToolDecl{{Name: "check", CapabilityClasses: []string{}}}}
	o := Options{ProjectDir: "/p", UserDir: "/u", Paths: []string{"x"}, Settings: map[string]map[string]string{"store": {"k": "v"}},
		Disabled: []string{"off"}, Builtin: []*Manifest{bi}, ToolTimeout: time.Second, DigestCache: "/c", OnlyEvent: "pre_tool_use"}
	b, err := json.Marshal(o.Wire())
	if err != nil {
		t.Fatal(err)
	}
	var w WireOptions
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	got := w.Apply(Options{})
	if got.OnlyEvent != "" || got.ProjectDir != "/p" || got.UserDir != "/u" || got.DigestCache != "/c" || got.ToolTimeout != time.Second ||
		!reflect.DeepEqual(got.Settings, o.Settings) || !reflect.DeepEqual(got.Disabled, o.Disabled) {
		t.Fatalf("options %+v", got)
	}
	if len(got.Builtin) != 1 || !reflect.DeepEqual(got.Builtin[0], bi) {
		t.Fatalf("built-in manifest %+v, want %+v", got.Builtin[0], bi)
	}
}
