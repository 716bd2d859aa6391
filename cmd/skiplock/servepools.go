package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// poolsConfig is pgdriver.Pools in skiplock.yaml:
//
//	pools: {budget: 20, claims: 8, completions: 8, maintenance: 3}
//
// and in serve's --pool-* flags and SKIPLOCK_POOL_* environment.
type poolsConfig struct {
	Claims      int `yaml:"claims"`
	Completions int `yaml:"completions"`
	Maintenance int `yaml:"maintenance"`
	Budget      int `yaml:"budget"`
}

// poolSettings are the pool sizes by file key, each with its flag and
// environment variable.
var poolSettings = []struct{ key, flag, env string }{
	{"budget", "pool-budget", "SKIPLOCK_POOL_BUDGET"},
	{"claims", "pool-claims", "SKIPLOCK_POOL_CLAIMS"},
	{"completions", "pool-completions", "SKIPLOCK_POOL_COMPLETIONS"},
	{"maintenance", "pool-maintenance", "SKIPLOCK_POOL_MAINTENANCE"},
}

func (p *poolsConfig) field(key string) *int {
	switch key {
	case "budget":
		return &p.Budget
	case "claims":
		return &p.Claims
	case "completions":
		return &p.Completions
	}
	return &p.Maintenance
}

// mergePools sets each pool size of cfg from its flag when set, else from
// its environment variable, else leaves the file's, and records where each
// came from.
func mergePools(fs *pflag.FlagSet, flags poolsConfig, cfg *serveConfig) error {
	cfg.poolsFrom = map[string]string{}
	for _, s := range poolSettings {
		if fs.Changed(s.flag) {
			*cfg.Pools.field(s.key) = *flags.field(s.key)
			cfg.poolsFrom[s.key] = "--" + s.flag
			continue
		}
		v, ok := os.LookupEnv(s.env)
		if !ok || v == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return usagef("%s: %q is not a whole number of connections", s.env, v)
		}
		*cfg.Pools.field(s.key) = n
		cfg.poolsFrom[s.key] = s.env
	}
	return nil
}

// checkPools refuses pools the database cannot have, naming the setting
// as the user gave it: the flag, the environment variable or the file key.
func checkPools(cfg serveConfig) error {
	if kind, _ := dbopen.Kind(cfg.DatabaseURL); kind != "postgres" {
		if cfg.Pools == (poolsConfig{}) {
			return nil
		}
		name := "pools"
		for _, s := range poolSettings {
			if from := cfg.poolsFrom[s.key]; from != "" && *cfg.Pools.field(s.key) != 0 {
				name = from
				break
			}
		}
		return usagef("%s: connection pools apply to PostgreSQL only, not to %s", name, cfg.DatabaseURL)
	}
	err := pgdriver.Pools(cfg.Pools).Check(cfg.DatabaseURL, cfg.ListenDatabaseURL)
	if err == nil {
		return nil
	}
	var pe *pgdriver.PoolsError
	if errors.As(err, &pe) && cfg.poolsFrom[pe.Field] != "" {
		return usagef("%s: %s", cfg.poolsFrom[pe.Field], pe.Problem)
	}
	return usagef("%v", err)
}

// addServePoolFlags declares serve's --pool-* flags into p.
func addServePoolFlags(f *pflag.FlagSet, p *poolsConfig) {
	addPoolFlags(f, (*pgdriver.Pools)(p))
	for _, s := range poolSettings {
		fl := f.Lookup(s.flag)
		fl.Usage = strings.Replace(fl.Usage, "each process", "the server", 1) + fmt.Sprintf(" (env %s; file pools.%s)", s.env, s.key)
	}
}

// poolsAttrs are the log attributes of the driver's pools when they are
// split by role: each pool's size, and the budget.
func poolsAttrs(drv driver.Driver, p poolsConfig) []any {
	pg, ok := drv.(*pgdriver.Driver)
	if !ok || p == (poolsConfig{}) {
		return nil
	}
	pools := pg.RolePools()
	attrs := []any{"pools_budget", p.Budget}
	for _, role := range []string{"claims", "completions", "maintenance"} {
		attrs = append(attrs, "pools_"+role, pools[role].Config().MaxConns)
	}
	return attrs
}
