package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nexus-harness/nexus/internal/state"
)

// Gitignore checks .nexus/.gitignore: it must ignore state/ (session files
// are never committed) and must not ignore the tracked memory/, context/,
// rules/ and history.json.
type Gitignore struct {
	Layout state.Layout
}

func (Gitignore) Name() string { return "gitignore" }

func (g Gitignore) Run(context.Context) []Finding {
	path := g.Layout.GitignorePath()
	if !state.Exists(g.Layout.Nexus) {
		return []Finding{ok("no %s yet: the first session creates it with its .gitignore", g.Layout.Nexus)}
	}
	b, err := g.Layout.ReadFile(path, 0)
	if errors.Is(err, os.ErrNotExist) {
		return []Finding{warn(path+" is missing, so git may commit the session files under state/",
			"create it with the single line `state/`").repairedBy(g.create)}
	}
	if err != nil {
		return []Finding{fault(fmt.Sprintf("cannot read %s: %v", path, err), "make it a regular file of a few lines (`state/`), readable by you")}
	}
	var out []Finding
	if !state.IgnoresState(string(b)) {
		out = append(out, fault(path+" does not ignore state/, so git may commit plan.json, tasks.json and the harness's session files",
			"add the line `state/` to it").repairedBy(g.appendState))
	}
	var tracked []string
	for _, line := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(line) {
		case "memory", "memory/", "/memory", "/memory/", "context", "context/", "/context", "/context/",
			"rules", "rules/", "/rules", "/rules/", "history.json", "/history.json":
			tracked = append(tracked, strings.TrimSpace(line))
		}
	}
	if len(tracked) > 0 {
		out = append(out, warn(fmt.Sprintf("%s ignores %s, which nexus-core keeps in git (project memory, context, rules and the cycle history)", path, strings.Join(tracked, ", ")),
			"remove those lines unless you mean to keep them out of git"))
	}
	if len(out) == 0 {
		out = append(out, ok("%s ignores state/", path))
	}
	return out
}

func (g Gitignore) create(context.Context) (string, error) {
	path := g.Layout.GitignorePath()
	// O_EXCL: never replace a file a session start wrote meanwhile.
	f, err := g.Layout.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.WriteString(state.GitignoreContent); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return "created " + path + " with the line `state/`", f.Sync()
}

func (g Gitignore) appendState(context.Context) (string, error) {
	path := g.Layout.GitignorePath()
	b, err := g.Layout.ReadFile(path, 0)
	if err != nil {
		return "", err
	}
	add := "state/\n"
	if len(b) > 0 && b[len(b)-1] != '\n' {
		add = "\n" + add
	}
	// Appending keeps the user's lines; a later line wins in gitignore, so
	// state/ ends up ignored whatever came before.
	f, err := g.Layout.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.WriteString(add); err != nil {
		return "", fmt.Errorf("append to %s: %w", path, err)
	}
	return "added the line `state/` to " + path, f.Sync()
}
