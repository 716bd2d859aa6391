package skiplockprom_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/skiplockprom"
)

// A program that runs its workers in-process exports the cluster's queue
// metrics to Prometheus without `skiplock serve`.
func ExampleNewCollector() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "skiplockprom")
	defer os.RemoveAll(dir)
	drv, err := sqlitedriver.Open(ctx, filepath.Join(dir, "skiplock.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer drv.Close()
	if _, err := drv.Migrator().Up(ctx, 0); err != nil {
		log.Fatal(err)
	}
	client, err := skiplock.NewClient(drv, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Insert(ctx, mailArgs{}, &skiplock.InsertOpts{Queue: "mail"}); err != nil {
		log.Fatal(err)
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(skiplockprom.NewCollector(client))
	// Serve it with promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).

	families, err := registry.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "skiplock_jobs" {
			for _, m := range f.GetMetric() {
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetLabel()[2].GetValue(), m.GetGauge().GetValue())
			}
		}
	}
	// Output: skiplock_jobs mail pending 1
}
