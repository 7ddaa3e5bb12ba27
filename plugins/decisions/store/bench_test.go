package store

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-harness/nexus/plugins/decisions/kernel"
)

// benchVocabulary feeds the synthetic decisions: technical words so BM25
// finds overlaps the way a real store does.
var benchVocabulary = strings.Fields(`postgresql redis kafka invoices payments ledger tenants cache queue
worker retries backoff circuit breaker api gateway graphql rest pagination cursor webhook stripe
encryption kms secrets rotation terraform kubernetes ecs fargate deploy rollout canary metrics tracing
logging alerts schema migration index replica sharding partition search elasticsearch tsvector
billing dunning currency exchange rates tax reports export csv pdf templates email postmark sms
auth oidc tokens sessions cookies rbac audit compliance backups retention archive s3 cdn static`)

func syntheticStore(b *testing.B, n int) *FS {
	b.Helper()
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "decisions"), 0o755)
	rng := rand.New(rand.NewSource(int64(n)))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = benchVocabulary[rng.Intn(len(benchVocabulary))]
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
		if err := os.WriteFile(filepath.Join(dir, "decisions", fmt.Sprintf("%03d-d.md", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fs, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return fs
}

// BenchmarkCheckDecisionWarm measures check_decision on a store whose
// index is already built: each call re-validates the cache key (a listing
// and a stat of every decision file) and scores the query.
func BenchmarkCheckDecisionWarm(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			fs := syntheticStore(b, n)
			approach := "Move the invoice cache from redis to postgresql with a replica for reports"
			ctx := "Retries and backoff keep the worker queue healthy during deploys."
			c, err := kernel.Decisions(fs)
			if err != nil {
				b.Fatal(err)
			}
			if res, err := kernel.Check(c, approach, ctx); err != nil || len(res.Related) != kernel.CheckTopK {
				b.Fatalf("warm-up check = %+v, %v", res, err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c, err := kernel.Decisions(fs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := kernel.Check(c, approach, ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexRebuild measures the cold path after a store change.
func BenchmarkIndexRebuild(b *testing.B) {
	fs := syntheticStore(b, 1000)
	for i := 0; i < b.N; i++ {
		fs.mu.Lock()
		fs.cache.close()
		fs.cache = corpusCache{}
		fs.mu.Unlock()
		c, err := kernel.Decisions(fs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kernel.Check(c, "redis cache", ""); err != nil {
			b.Fatal(err)
		}
	}
}
