package tools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/harness"
	"github.com/nexus-harness/nexus/internal/testenv"
	"github.com/nexus-harness/nexus/schema"
	"github.com/nexus-harness/nexus/vocabulary"
)

// The test binary doubles as a worker process for the concurrency test:
// started with NEXUS_TOOLS_WORKER set, it adds and updates tasks in the
// project named by the environment and exits.
func TestMain(m *testing.M) {
	if id := os.Getenv("NEXUS_TOOLS_WORKER"); id != "" {
		if err := worker(id); err != nil {
			fmt.Fprintln(os.Stderr, "worker", id+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	workers        = 8
	tasksPerWorker = 10
)

func worker(id string) error {
	proj, coreDir, start := os.Getenv("NEXUS_TOOLS_PROJECT"), os.Getenv("NEXUS_TOOLS_CORE"), os.Getenv("NEXUS_TOOLS_START")
	c, err := vocabulary.LoadManifest(coreDir)
	if err != nil {
		return err
	}
	e, err := harness.New(harness.Options{Project: proj, Core: c, Schemas: schema.NewCoreSet(c.Dir), Branch: func() string { return "main" }})
	if err != nil {
		return err
	}
	// Start together: every worker waits for the go signal.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(start); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no start signal")
		}
		time.Sleep(time.Millisecond)
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < tasksPerWorker; i++ {
		title := fmt.Sprintf("w%s-%d", id, i)
		res, err := e.CallTool(ctx, "task_add", map[string]any{"title": title, "context": "concurrency", "deps": []any{}})
		if err != nil {
			return fmt.Errorf("task_add %s: %w", title, err)
		}
		tid := res["task"].(map[string]any)["id"]
		// One update with a number, one with the number as a string.
		if _, err := e.CallTool(ctx, "task_update", map[string]any{"id": tid, "status": "in_progress"}); err != nil {
			return fmt.Errorf("task_update %v: %w", tid, err)
		}
		if _, err := e.CallTool(ctx, "task_update", map[string]any{"id": fmt.Sprint(tid), "status": "completed"}); err != nil {
			return fmt.Errorf("task_update %v: %w", tid, err)
		}
		fmt.Fprintf(out, "%s %v\n", title, tid)
	}
	return nil
}

// TestConcurrentProcesses runs 8 processes adding and updating tasks in one
// project at once: tasks.json must end schema-valid with every task present
// once, under the id its writer was told, and every update applied.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, proj := newEngine(t) // no tasks.json yet: creating it races too
	start := filepath.Join(t.TempDir(), "go")
	type proc struct {
		cmd    *exec.Cmd
		out    bytes.Buffer
		stderr bytes.Buffer
	}
	procs := make([]*proc, workers)
	for i := range procs {
		p := &proc{cmd: exec.Command(exe, "-test.run=^$")}
		p.cmd.Env = append(os.Environ(),
			"NEXUS_TOOLS_WORKER="+strconv.Itoa(i),
			"NEXUS_TOOLS_PROJECT="+proj,
			"NEXUS_TOOLS_CORE="+testenv.CoreDir(t),
			"NEXUS_TOOLS_START="+start,
		)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	told := map[string]float64{}
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, p.stderr.String())
		}
		sc := bufio.NewScanner(&p.out)
		for sc.Scan() {
			var title string
			var id float64
			if _, err := fmt.Sscan(sc.Text(), &title, &id); err != nil {
				t.Fatalf("worker %d printed %q", i, sc.Text())
			}
			told[title] = id
		}
	}
	if len(told) != workers*tasksPerWorker {
		t.Fatalf("workers reported %d tasks, want %d", len(told), workers*tasksPerWorker)
	}

	raw := mustRead(t, filepath.Join(proj, tasksPath))
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("tasks.json: %v", err)
	}
	validateState(t, proj)
	var file struct {
		Tasks []struct {
			ID     float64 `json:"id"`
			Title  string  `json:"title"`
			Status string  `json:"status"`
		} `json:"tasks"`
	}
	json.Unmarshal(raw, &file)
	if len(file.Tasks) != workers*tasksPerWorker {
		t.Fatalf("tasks.json holds %d tasks, want %d", len(file.Tasks), workers*tasksPerWorker)
	}
	ids := map[float64]bool{}
	for _, task := range file.Tasks {
		if ids[task.ID] {
			t.Errorf("id %v used twice", task.ID)
		}
		ids[task.ID] = true
		if want, ok := told[task.Title]; !ok || want != task.ID {
			t.Errorf("task %q has id %v, its writer was told %v", task.Title, task.ID, want)
		}
		if task.Status != "completed" {
			t.Errorf("task %q: status %s, want completed (an update was lost)", task.Title, task.Status)
		}
	}
}
