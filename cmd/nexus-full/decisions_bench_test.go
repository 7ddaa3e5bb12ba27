package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/harness/pluginhost"
	"github.com/nexus-harness/nexus/harness/pluginhost/launch"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionstest"
)

// Decision store at scale (issue figures: at 10,000 decisions a
// check_decision 2.3 s after the previous one, the plugin's start to its
// first answer, `nexus decision check` as a process; at 100,000 the paced
// call and the store process's RSS):
//
//	go test -run '^$' -bench DecisionStoreScale -benchtime 5x ./cmd/nexus/
//	NEXUS_BENCH_100K=1 go test -run '^$' -bench 'DecisionStoreScale/decisions=100000' -benchtime 5x ./cmd/nexus/
//
// The synthetic store is generated once per size into a temporary folder
// (decisionstest; 100,000 decisions take about a minute and 70 MB) and
// removed afterwards. Its persistent index is warmed once before timing,
// as it is after the first use of a real store.
func BenchmarkDecisionStoreScale(b *testing.B) {
	sizes := []int{10000}
	if os.Getenv("NEXUS_BENCH_100K") != "" {
		sizes = append(sizes, 100000)
	}
	bin := buildNexus(b, b.TempDir())
	for _, n := range sizes {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			home, proj := b.TempDir(), b.TempDir()
			store := filepath.Join(proj, "store")
			if err := decisionstest.Write(store, n); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(proj, ".nexus"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(proj, ".nexus", "nexus.yaml"), []byte("decisions:\n  store: store\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			env := append(hookEnv(b, home), "NAURO_HOME="+b.TempDir(), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
			cli := func() (wall, cpu time.Duration) {
				cmd := exec.Command(bin, "decision", "check", "--store", store, decisionstest.Approach)
				cmd.Dir, cmd.Env = proj, env
				t0 := time.Now()
				out, err := cmd.CombinedOutput()
				wall = time.Since(t0)
				if err != nil || !strings.Contains(string(out), "Found 5 related decisions") {
					b.Fatalf("nexus decision check: %v\n%.500s", err, out)
				}
				return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			cli() // builds the persistent index

			b.Run("cli-check", func(b *testing.B) {
				var s, c durations
				for b.Loop() {
					w, u := cli()
					s, c = append(s, w), append(c, u)
				}
				s.report(b, "ms", time.Millisecond)
				c.report(b, "ms-cpu", time.Millisecond)
			})

			b.Run("plugin-start", func(b *testing.B) {
				for _, kv := range env {
					k, v, _ := strings.Cut(kv, "=")
					b.Setenv(k, v)
				}
				man := harness.DecisionsManifest(proj, filepath.Join(filepath.Dir(bin), pluginhost.HostProgramName))
				args := json.RawMessage(`{"proposed_approach":"` + decisionstest.Approach + `"}`)
				var s, c durations
				for b.Loop() {
					m, err := launch.New([]*pluginhost.Manifest{man}, pluginhost.Options{ProjectDir: proj, NoUserPlugins: true, Logger: pluginhost.NopLogger{},
						Settings: map[string]map[string]string{decisionsapi.Name: {decisionsapi.SettingStore: store}}})
					if err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					res, err := m.CallTool(context.Background(), "check_decision", args)
					d := time.Since(t0)
					if pids := childPIDs(b, os.Getpid(), "serve decisions"); len(pids) == 1 {
						if cpu, ok := procCPU(pids[0]); ok {
							c = append(c, cpu)
						}
					}
					m.Close()
					if err != nil || res.IsError || !strings.Contains(res.Text, "Found 5 related decisions") {
						b.Fatalf("check_decision: %+v %v", res, err)
					}
					s = append(s, d)
				}
				s.report(b, "ms", time.Millisecond)
				c.report(b, "ms-store-cpu", time.Millisecond)
			})

			b.Run("mcp-paced", func(b *testing.B) {
				cmd := exec.Command(bin, "mcp", "--only", "decisions")
				cmd.Dir, cmd.Env = proj, env
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				defer func() { in.Close(); cmd.Wait() }()
				r := bufio.NewReaderSize(out, 1<<20)
				id := 0
				call := func() time.Duration {
					id++
					t0 := time.Now()
					if _, err := io.WriteString(in, toolCall(id, "check_decision", map[string]any{"proposed_approach": decisionstest.Approach})); err != nil {
						b.Fatal(err)
					}
					line, err := r.ReadString('\n')
					d := time.Since(t0)
					if err != nil || !strings.Contains(line, "Found 5 related decisions") {
						b.Fatalf("check_decision: %v %.300s", err, line)
					}
					return d
				}
				call()
				// The store process: nexus -> nexus-plugins host -> serve decisions.
				store := -1
				if pids := childPIDs(b, cmd.Process.Pid, "serve decisions"); len(pids) == 1 {
					store = pids[0]
				}
				var s, c durations
				for b.Loop() {
					time.Sleep(2300 * time.Millisecond) // how agents pace their calls
					before, _ := procCPU(store)
					s = append(s, call())
					if after, ok := procCPU(store); ok {
						c = append(c, after-before)
					}
				}
				s.report(b, "ms", time.Millisecond)
				c.report(b, "ms-store-cpu", time.Millisecond)
				if hwm, rss, ok := procMemory(store); ok {
					b.ReportMetric(hwm, "MiB-store-peak-rss")
					b.ReportMetric(rss, "MiB-store-rss")
				}
			})
		})
	}
}

// procMemory reads VmHWM and VmRSS (MiB) of a process.
func procMemory(pid int) (hwm, rss float64, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmHWM:":
			hwm = kb / 1024
		case "VmRSS:":
			rss = kb / 1024
		}
	}
	return hwm, rss, hwm > 0
}

// procCPU is the CPU time a process's live threads have used so far, from
// /proc/PID/task/*/schedstat (nanoseconds, unlike the 10 ms ticks of stat).
func procCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, false
	}
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				total += time.Duration(ns)
			}
		}
	}
	return total, true
}
