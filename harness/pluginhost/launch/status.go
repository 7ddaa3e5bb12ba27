package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// Runtime says what a plugin's process is doing now.
func (m *Manager) Runtime(name string) pluginhost.Runtime {
	p, ok := m.procs[name]
	if !ok {
		return pluginhost.Runtime{State: pluginhost.StateStopped}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var rt pluginhost.Runtime
	switch {
	case p.inst != nil && !p.inst.exited():
		rt.State, rt.PID = pluginhost.StateRunning, p.inst.pid
	case p.starting != nil:
		rt.State = pluginhost.StateStarting
	case p.failures > 0 || p.inst != nil:
		rt.State = pluginhost.StateRestarting
	default:
		rt.State = pluginhost.StateStopped
	}
	rt.Restarts = p.restarts
	if p.lastErr != nil {
		rt.LastError = p.lastErr.Error()
	}
	return rt
}

// Verify starts a separate process of the plugin (the managed one, if any,
// is left alone), checks it end to end and stops it. A plugin that cannot
// be verified gives a report with OK false and Error set; the error return
// is only for an unknown name or a closed manager.
func (m *Manager) Verify(ctx context.Context, name string) (*pluginhost.VerifyReport, error) {
	p, ok := m.procs[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w is declared with that name", name, pluginhost.ErrUnknownPlugin)
	}
	if m.isClosed() {
		return nil, pluginhost.ErrClosed
	}
	r := &pluginhost.VerifyReport{
		Name: name, ExpectedSHA256: p.man.SHA256, MTLS: !m.opts.DisableMTLS,
		Tools: []pluginhost.Tool{}, Subscriptions: p.man.Events,
	}
	if r.Subscriptions == nil {
		r.Subscriptions = map[string]pluginhost.Subscription{}
	}
	if actual, err := pluginhost.FileSHA256(p.man.ExecutablePath()); err == nil {
		r.ActualSHA256 = actual
	}
	type launched struct {
		inst *instance
		err  error
	}
	done := make(chan launched, 1)
	go func() {
		inst, err := p.launch(ctx, false)
		done <- launched{inst, err}
	}()
	var l launched
	select {
	case l = <-done:
	case <-ctx.Done():
		go func() {
			if l := <-done; l.inst != nil {
				l.inst.stop()
			}
		}()
		r.Error = fmt.Sprintf("plugin %s: verification stopped: %v", name, ctx.Err())
		return r, nil
	}
	if l.err != nil {
		r.Error = l.err.Error()
		var de *pluginhost.DigestError
		if errors.As(l.err, &de) {
			r.ActualSHA256 = de.Actual
		}
		return r, nil
	}
	defer l.inst.stop()
	r.OK = true
	r.Protocol, r.StartTime, r.Info = l.inst.protocol, l.inst.startDur, l.inst.info
	r.Notes = append(r.Notes, l.inst.notes...)
	for _, pr := range m.cat.Refused(name) {
		r.Notes = append(r.Notes, pr.Error())
	}
	for _, t := range p.man.Tools {
		spec, ok := l.inst.tools[t.Name]
		if !ok {
			continue
		}
		ref, ok := m.cat.Resolve(p.man.ExposedName(t.Name))
		if !ok || ref.Plugin != name {
			continue // refused for its name: noted below
		}
		r.Tools = append(r.Tools, pluginhost.Tool{ToolRef: ref, Spec: spec})
		if err := compileToolSchema(spec.InputSchema); err != nil {
			r.OK = false
			r.Error = fmt.Sprintf("tool %s: input schema is not a usable JSON Schema: %v", t.Name, err)
		}
	}
	return r, nil
}

// compileToolSchema checks that a tool's input schema compiles (draft
// 2020-12 unless it says otherwise), as nexus's argument validation will
// need it to.
func compileToolSchema(s []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "urn:nexus:plugin-tool-input"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}
