package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// Commands builds the repository's programs once per test binary, the
// way `make build` does (static, stripped), into one folder, so that
// nexus finds nexus-plugins beside it as in an installation. A package's
// TestMain calls Remove when its tests are done.
type Commands struct {
	mu    sync.Mutex
	dir   string
	built map[string]*build
}

type build struct {
	once sync.Once
	err  error
}

// Path returns the path of the program built from pkg (module-relative,
// "./cmd/nexus"), named after its last element; it is built on first use.
func (c *Commands) Path(t testing.TB, pkg string) string {
	t.Helper()
	p, err := c.build(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (c *Commands) build(pkg string) (string, error) {
	c.mu.Lock()
	if c.built == nil {
		c.built = map[string]*build{}
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "nexus-test-bin-")
		if err != nil {
			c.mu.Unlock()
			return "", err
		}
		c.dir = dir
	}
	b := c.built[pkg]
	if b == nil {
		b = &build{}
		c.built[pkg] = b
	}
	out := filepath.Join(c.dir, path.Base(pkg))
	c.mu.Unlock()
	b.once.Do(func() {
		root := moduleRoot()
		if root == "" {
			b.err = fmt.Errorf("cannot find go.mod above the working directory")
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
		}
	})
	return out, b.err
}

// Remove deletes the folder of the built programs.
func (c *Commands) Remove() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}
