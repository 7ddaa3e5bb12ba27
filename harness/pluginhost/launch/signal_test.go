package launch

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost/plugintest"
)

const (
	helperHostEnv  = "PLUGINHOST_TEST_HELPER_HOST"
	noPdeathsigEnv = "PLUGINHOST_TEST_NO_PDEATHSIG"
	chatterEnv     = "PLUGINHOST_TEST_CHATTER"
)

// TestPluginOutputNeverReachesStdout runs a host whose plugin prints to its
// stdout and stderr on every call: the host's stdout (the MCP channel) must
// hold only what the host itself wrote.
func TestPluginOutputNeverReachesStdout(t *testing.T) {
	manifest := plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: testPluginBinary(t)})
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperHostEnv+"="+manifest, chatterEnv+"=1")
	var stderr strings.Builder
	host.Stderr = &stderr
	out, err := host.Output()
	if err != nil {
		t.Fatalf("helper host: %v\n%s", err, stderr.String())
	}
	if string(out) != "DONE\n" {
		t.Fatalf("host stdout = %q, want only DONE", out)
	}
}

// runHelperHost is a tiny host process for the signal tests: it starts the
// plugin of the manifest named in the environment, prints the plugin's pid
// and waits to be killed.
func runHelperHost() {
	if os.Getenv(noPdeathsigEnv) != "" {
		parentDeathSignal = false
	}
	m, err := Open(Options{Paths: []string{os.Getenv(helperHostEnv)}, NoUserPlugins: true})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	if os.Getenv(chatterEnv) != "" {
		for range 3 {
			if _, err := m.CallTool(context.Background(), "tp_echo", nil); err != nil {
				fmt.Println("ERR", err)
				os.Exit(2)
			}
		}
		m.Close()
		fmt.Println("DONE")
		os.Exit(0)
	}
	stop := m.ShutdownOnSignal()
	defer stop()
	res, err := m.CallTool(context.Background(), "tp_pid", nil)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	fmt.Println("PID", res.Text)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// TestPluginDiesWithHost kills a host process in three ways and checks that
// its plugin goes too. SIGTERM and SIGINT are handled by ShutdownOnSignal
// (the parent-death signal is switched off to prove it); SIGKILL can only be
// caught by the parent-death signal, and the control case shows that the
// plugin would indeed survive without it.
func TestPluginDiesWithHost(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux-only")
	}
	exe := testPluginBinary(t)
	manifest := plugintest.WriteManifest(t, t.TempDir(), plugintest.Spec{Name: "tp", Exe: exe})
	tests := []struct {
		name        string
		sig         syscall.Signal
		pdeathsig   bool
		wantSurvive bool
	}{
		{"SIGTERM via ShutdownOnSignal", syscall.SIGTERM, false, false},
		{"SIGINT via ShutdownOnSignal", syscall.SIGINT, false, false},
		{"SIGKILL via parent-death signal", syscall.SIGKILL, true, false},
		{"SIGKILL without parent-death signal (control)", syscall.SIGKILL, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case has its own host and plugin; the control case waits
			// its whole 3 s, the others end as soon as the plugin is gone.
			t.Parallel()
			host := exec.Command(os.Args[0], "-test.run=^$")
			host.Env = append(os.Environ(), helperHostEnv+"="+manifest)
			if !tt.pdeathsig {
				host.Env = append(host.Env, noPdeathsigEnv+"=1")
			}
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer host.Process.Kill()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("helper host: %v (%q)", err, line)
			}
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != "PID" {
				t.Fatalf("helper host said %q", line)
			}
			pid, _ := strconv.Atoi(f[1])
			if !alive(pid) {
				t.Fatalf("plugin %d is not running", pid)
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			if err := host.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			err = host.Wait()
			// The host must still end by the signal (re-raised after cleanup).
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != tt.sig {
				t.Errorf("host ended with %v, want killed by %v", err, tt.sig)
			}
			deadline := time.Now().Add(3 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if survived := alive(pid); survived != tt.wantSurvive {
				t.Fatalf("plugin survived its host: %v, want %v", survived, tt.wantSurvive)
			}
		})
	}
}
