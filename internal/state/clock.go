package state

import "time"

// TimeLayout renders timestamps the way JavaScript's toISOString does (UTC,
// millisecond precision), the form every nexus-core harness writes.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Clock returns the current time; tests replace it.
type Clock func() time.Time

// Format renders t in TimeLayout, in UTC.
func Format(t time.Time) string { return t.UTC().Format(TimeLayout) }
