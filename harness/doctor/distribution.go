package doctor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/nexus-harness/nexus/vocabulary"
)

// maxListed bounds how many problems of one kind a finding lists.
const maxListed = 10

// Distribution checks the nexus-core distribution nexus would use, with the
// same validation as `nexus validate`.
type Distribution struct {
	// Dir is the located distribution; LocateErr why none was found.
	Dir       string
	LocateErr error
	// Validate is `nexus validate`'s check (the caller shares it so the two
	// commands can never disagree).
	Validate func(dir string) (*vocabulary.Report, error)
}

func (Distribution) Name() string { return "distribution" }

func (d Distribution) Run(context.Context) []Finding {
	if d.LocateErr != nil || d.Dir == "" {
		msg := "no nexus-core distribution found"
		if d.LocateErr != nil {
			msg = d.LocateErr.Error()
		}
		return []Finding{fault(msg, "pass --core DIR, set NEXUS_CORE_DIR or core.dir in .nexus/nexus.yaml, or run `npm install @moreih29/nexus-core@0.10` in the project")}
	}
	r, err := d.Validate(d.Dir)
	if err != nil {
		return []Finding{fault(fmt.Sprintf("could not validate %s: %v", d.Dir, err), "run `nexus validate` for details")}
	}
	if r.Errors == 0 {
		f := ok("nexus-core %s at %s is valid", r.Version, d.Dir)
		if r.Warnings > 0 {
			f.Message += fmt.Sprintf(" (%s, listed by `nexus validate`)", plural(r.Warnings, "warning"))
		}
		return []Finding{f}
	}
	fix := "reinstall nexus-core 0.10.x (`npm install @moreih29/nexus-core@0.10`) or point core.dir at an intact copy; `nexus validate` lists every problem"
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity != vocabulary.SeverityError {
			continue
		}
		if len(out) == maxListed {
			out = append(out, fault(fmt.Sprintf("%d more errors in %s", r.Errors-maxListed, d.Dir), fix))
			break
		}
		msg := fmt.Sprintf("%s:%d:%d: %s: %s", filepath.Join(d.Dir, filepath.FromSlash(f.File)), f.Line, f.Col, f.Path, f.Message)
		if f.Gate != "" {
			msg += " [" + f.Gate + "]"
		}
		out = append(out, fault(msg, fix))
	}
	return out
}
