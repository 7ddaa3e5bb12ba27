// Package decisionstest generates synthetic decision stores for the
// decision store's benchmarks (store, plugin and CLI process figures):
// deterministic Nauro decision files over a technical vocabulary, so BM25
// finds overlaps the way a real store does.
package decisionstest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var vocabulary = strings.Fields(`postgresql redis kafka invoices payments ledger tenants cache queue
worker retries backoff circuit breaker api gateway graphql rest pagination cursor webhook stripe
encryption kms secrets rotation terraform kubernetes ecs fargate deploy rollout canary metrics tracing
logging alerts schema migration index replica sharding partition search elasticsearch tsvector
billing dunning currency exchange rates tax reports export csv pdf templates email postmark sms
auth oidc tokens sessions cookies rbac audit compliance backups retention archive s3 cdn static`)

var written = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

// Write creates decisions/NNN-d.md for 1..n under dir (every ninth one
// superseded by the next).
func Write(dir string, n int) error {
	if err := os.MkdirAll(filepath.Join(dir, "decisions"), 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(int64(n)))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = vocabulary[rng.Intn(len(vocabulary))]
		}
		return strings.Join(w, " ")
	}
	for i := 1; i <= n; i++ {
		status := "active"
		extra := ""
		if i%9 == 0 {
			status, extra = "superseded", fmt.Sprintf("superseded_by: '%d'\n", i+1)
		}
		text := fmt.Sprintf("---\ndate: 2026-01-05\nversion: 1\nstatus: %s\nconfidence: medium\n%s---\n\n# %03d \u2014 Adopt %s\n\n## Decision\n\n%s.\n\n## Rejected Alternatives\n\n### %s\n\nBecause %s.\n",
			status, extra, i, words(4), words(45), words(2), words(8))
		p := filepath.Join(dir, "decisions", fmt.Sprintf("%03d-d.md", i))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		// Dated like a store written earlier, not in the same instant as
		// the benchmark's index (which would make every file "racy").
		if err := os.Chtimes(p, written, written); err != nil {
			return err
		}
	}
	return nil
}

var (
	mu     sync.Mutex
	stores = map[int]string{}
	root   string
)

// Store returns a store folder holding n synthetic decisions, generated
// once per process (generating 100,000 takes seconds and ~70 MB); Cleanup
// removes them. The caller must not change it.
func Store(n int) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if dir, ok := stores[n]; ok {
		return dir, nil
	}
	if root == "" {
		r, err := os.MkdirTemp("", "nexus-decisions-bench-")
		if err != nil {
			return "", err
		}
		root = r
	}
	dir := filepath.Join(root, fmt.Sprintf("store-%d", n))
	if err := Write(dir, n); err != nil {
		return "", err
	}
	stores[n] = dir
	return dir, nil
}

// Cleanup removes every store Store generated (call it from TestMain).
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if root != "" {
		os.RemoveAll(root)
	}
	root, stores = "", map[int]string{}
}

// Approach and Context are the check_decision arguments the benchmarks
// ask: words of the vocabulary, so the top five always score.
const (
	Approach = "Move the invoice cache from redis to postgresql with a replica for reports"
	Context  = "Retries and backoff keep the worker queue healthy during deploys."
)
