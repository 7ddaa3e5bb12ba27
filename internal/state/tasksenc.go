package state

import (
	"bytes"
	"errors"

	jsonv2 "github.com/go-json-experiment/json"
)

// A tool call changes one task of tasks.json (or adds one) and the file is
// rewritten whole. Encoding thousands of unchanged tasks again was most of
// a write's CPU time (about 10 ms at 10,000 tasks), so the store keeps, for
// the version of tasks.json it last wrote, the bytes written and where each
// task's encoding sits in them. The next write copies the encoding of every
// task equal to the one at the same index of that version and encodes only
// the others. The result is byte for byte what Encode gives (the tests and
// FuzzEncodeTasks check it), so nothing about the file changes: it is
// still validated, written to a temporary file, fsynced and renamed.

// taskLayout is one encoded tasks.json and the span of each task in it.
type taskLayout struct {
	data  []byte
	spans [][2]int // data[spans[i][0]:spans[i][1]] encodes Tasks[i]
}

// task returns the encoding of task i, or nil.
func (l *taskLayout) task(i int) []byte {
	if l == nil || i >= len(l.spans) {
		return nil
	}
	return l.data[l.spans[i][0]:l.spans[i][1]]
}

// tasksMember is the tasks array, emptied, as Encode lays out a top-level
// member (two spaces in). A raw newline occurs only between tokens and
// deeper members are indented further, so it is found once in the shell.
var tasksMember = []byte("\n  \"tasks\": []")

// taskIndent is what follows a newline inside a task at the depth Encode
// writes tasks (an element of a top-level member's array).
var taskIndent = []byte("\n    ")

// encodeTasks encodes t as Encode does, reusing from prev (the layout of
// base, the version t was derived from) the encoding of every task equal
// to base's task at the same index. It returns the new layout.
func encodeTasks(t *Tasks, base *Tasks, prev *taskLayout) ([]byte, *taskLayout, error) {
	shell := *t
	shell.Tasks = []Task{}
	sb, err := Encode(&shell)
	if err != nil {
		return nil, nil, err
	}
	at := bytes.Index(sb, tasksMember)
	if at < 0 || bytes.Contains(sb[at+len(tasksMember):], tasksMember) {
		return nil, nil, errors.New("encode tasks.json: the tasks member is not where it is expected")
	}
	open := at + len(tasksMember) - 1 // the ']' of "[]"
	if len(t.Tasks) == 0 {
		return sb, &taskLayout{data: sb}, nil
	}
	size := len(sb)
	if prev != nil {
		size += len(prev.data)
	}
	out := make([]byte, 0, size+size/8)
	out = append(out, sb[:open]...)
	spans := make([][2]int, len(t.Tasks))
	var one bytes.Buffer
	for i := range t.Tasks {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, taskIndent...)
		start := len(out)
		if b := prev.task(i); b != nil && base != nil && i < len(base.Tasks) && t.Tasks[i].equal(&base.Tasks[i]) {
			out = append(out, b...)
		} else {
			one.Reset()
			if err := jsonv2.MarshalWrite(&one, &t.Tasks[i], indentOpts); err != nil {
				return nil, nil, err
			}
			out = appendIndented(out, bytes.TrimSuffix(one.Bytes(), []byte("\n")))
		}
		spans[i] = [2]int{start, len(out)}
	}
	out = append(out, "\n  "...)
	out = append(out, sb[open:]...)
	return out, &taskLayout{data: out, spans: spans}, nil
}

// appendIndented appends b with taskIndent after each of its newlines.
func appendIndented(out, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		out = append(out, taskIndent...)
		b = b[i+1:]
	}
}
