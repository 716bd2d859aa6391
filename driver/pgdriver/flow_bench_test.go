package pgdriver_test

import (
	"context"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// BenchmarkJobInsertFlow inserts jobs by JobInsertMany, one or 100 a call:
// plain, and with a concurrency key and a rate key spread over 100 values
// (the path whose transaction locks, makes and tags the keys).
func BenchmarkJobInsertFlow(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch int
		keyed bool
	}{{"plain", 1, false}, {"keyed", 1, true}, {"plain100", 100, false}, {"keyed100", 100, true}} {
		b.Run(c.name, func(b *testing.B) {
			d, _ := pgtest.Schema(b)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				jobs := make([]*driver.InsertParams, c.batch)
				for k := range jobs {
					jobs[k] = &driver.InsertParams{Kind: "bench", Queue: "default", Priority: 5, MaxRetries: 3,
						Payload: []byte(`{"n":1}`)}
					if c.keyed {
						key := driver.FlowKey("bench", itoa(i%100))
						jobs[k].Flow = &driver.FlowKeys{ConcurrencyKey: key, ConcurrencyLimit: 2, RateKey: key, Rate: 10, Burst: 10}
					}
					i++
				}
				if _, err := d.JobInsertMany(ctx, jobs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*c.batch)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
