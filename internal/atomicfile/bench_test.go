package atomicfile

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// BenchmarkWriteFileIn is the floor under every durable state write: a
// temporary file, fsync, rename and the directory's fsync (durable), or
// the same without the two fsyncs, for the sizes of benchtable's tasks.json at 100, 1,000
// and 10,000 tasks. It reports the median per write.
//
//	go test -run '^$' -bench WriteFileIn -benchtime 200x ./internal/atomicfile/
func BenchmarkWriteFileIn(b *testing.B) {
	for _, size := range []int{56 << 10, 560 << 10, 5600 << 10} {
		for _, durable := range []bool{true, false} {
			b.Run(fmt.Sprintf("size=%dKiB/durable=%v", size>>10, durable), func(b *testing.B) {
				root, err := os.OpenRoot(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer root.Close()
				data := make([]byte, size)
				times := make([]time.Duration, 0, b.N)
				for b.Loop() {
					t0 := time.Now()
					if durable {
						err = WriteFileIn(root, "tasks.json", data, 0o644)
					} else {
						err = WriteFileInNoSync(root, "tasks.json", data, 0o644)
					}
					if err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(t0))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
			})
		}
	}
}
