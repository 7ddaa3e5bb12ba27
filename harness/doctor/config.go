package doctor

import (
	"context"
	"fmt"
	"strings"
)

// Config reports whether the configuration loads: the files it read, each
// key left out (a warning: it keeps its default) and each file that does
// not load at all (an error), with how to fix it. The composition root (harness/compose) loads the
// configuration once and fills it in.
type Config struct {
	// Files are the configuration files read, lowest layer first.
	Files []string
	// Problems are the layers that do not load.
	Problems []ConfigProblem
}

// ConfigProblem is one problem of the configuration: a key left out (a
// warning) or a file left out whole (Broken, an error).
type ConfigProblem struct {
	// What names the layer ("the project configuration FILE").
	What string
	Err  error
	// Effect says what nexus does instead.
	Effect string
	Broken bool
	// Fix says how to fix it.
	Fix string
}

func (Config) Name() string { return "config" }

func (c Config) Run(context.Context) []Finding {
	if len(c.Problems) == 0 {
		if len(c.Files) == 0 {
			return []Finding{ok("no configuration files; built-in defaults, NEXUS_* variables and flags apply")}
		}
		return []Finding{ok("loaded %s", strings.Join(c.Files, ", "))}
	}
	var out []Finding
	for _, p := range c.Problems {
		msg := fmt.Sprintf("%s: %v", p.What, p.Err)
		if p.Effect != "" {
			msg += "; " + p.Effect
		}
		if p.Broken {
			out = append(out, fault(fmt.Sprintf("%s does not load: %v; %s", p.What, p.Err, p.Effect), p.Fix))
			continue
		}
		out = append(out, warn(msg, p.Fix))
	}
	return out
}
