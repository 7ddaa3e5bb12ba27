package doctor

import (
	"context"
	"fmt"

	"github.com/nexus-harness/nexus/vocabulary"
)

// maxListed bounds how many problems of one kind a finding lists.
const maxListed = 10

// Distribution checks the nexus-core distribution nexus would use, with the
// same validation as `nexus validate`, and says which one it is and why.
type Distribution struct {
	// Dist is the located distribution; LocateErr why none is usable.
	Dist      vocabulary.Dist
	LocateErr error
	// Validate is `nexus validate`'s check (the caller shares it so the two
	// commands can never disagree).
	Validate func(vocabulary.Dist) (*vocabulary.Report, error)
}

func (Distribution) Name() string { return "distribution" }

func (d Distribution) Run(context.Context) []Finding {
	if d.LocateErr != nil || d.Dist.FS == nil {
		msg := "no nexus-core distribution found"
		if d.LocateErr != nil {
			msg = d.LocateErr.Error()
		}
		return []Finding{fault(msg, "fix --core, NEXUS_CORE_DIR or core.dir, or unset them to use the nexus-core "+vocabulary.BuiltinVersion+" built into nexus")}
	}
	where := d.Dist.Where()
	r, err := d.Validate(d.Dist)
	if err != nil {
		return []Finding{fault(fmt.Sprintf("could not validate %s: %v", where, err), "run `nexus validate` for details")}
	}
	if r.Errors == 0 {
		f := ok("nexus-core %s in use: %s (%s), valid", r.Version, where, d.Dist.Source)
		up, _ := r.Upstream()
		if r.Warnings > up {
			f.Message += fmt.Sprintf(" (%s, listed by `nexus validate`)", plural(r.Warnings-up, "warning"))
		}
		if up > 0 {
			f.Message += fmt.Sprintf(" (%s of nexus-core itself tolerated, listed by `nexus validate -v`)", plural(up, "known upstream deviation"))
		}
		return []Finding{f}
	}
	fix := "point --core, NEXUS_CORE_DIR or core.dir at an intact nexus-core 0.10.x, or unset them to use the nexus-core " + vocabulary.BuiltinVersion + " built into nexus; `nexus validate` lists every problem"
	if d.Dist.Source == "node_modules" {
		fix = "reinstall nexus-core 0.10.x (`npm install @moreih29/nexus-core@0.10`) or remove it to use the one built into nexus; `nexus validate` lists every problem"
	}
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity != vocabulary.SeverityError {
			continue
		}
		if len(out) == maxListed {
			out = append(out, fault(fmt.Sprintf("%d more errors in %s", r.Errors-maxListed, where), fix))
			break
		}
		msg := fmt.Sprintf("%s:%d:%d: %s: %s", d.Dist.File(f.File), f.Line, f.Col, f.Path, f.Message)
		if f.Gate != "" {
			msg += " [" + f.Gate + "]"
		}
		out = append(out, fault(msg, fix))
	}
	return out
}
