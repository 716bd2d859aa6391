package drivertest

import "github.com/skiplock/skiplock/driver"

// need answers x as the optional store T, and skips the case when the
// driver does not implement it: the core cases run on every driver.
func need[T any](e *env, x driver.Executor) T {
	e.t.Helper()
	s, err := driver.As[T](x)
	if err != nil {
		e.t.Skipf("driver %s: %v", e.d.Name(), err)
	}
	return s
}

func (e *env) admin() driver.AdminStore        { return need[driver.AdminStore](e, e.d) }
func (e *env) stats() driver.StatsStore        { return need[driver.StatsStore](e, e.d) }
func (e *env) bulk() driver.BulkStore          { return need[driver.BulkStore](e, e.d) }
func (e *env) archive() driver.ArchiveStore    { return need[driver.ArchiveStore](e, e.d) }
func (e *env) tokens() driver.TokenStore       { return need[driver.TokenStore](e, e.d) }
func (e *env) schedules() driver.ScheduleStore { return need[driver.ScheduleStore](e, e.d) }
func (e *env) periodic() driver.PeriodicStore  { return need[driver.PeriodicStore](e, e.d) }
func (e *env) processes() driver.ProcessStore  { return need[driver.ProcessStore](e, e.d) }

func (e *env) metrics() driver.MetricsStore { return need[driver.MetricsStore](e, e.d) }
func (e *env) stops() driver.StopStore      { return need[driver.StopStore](e, e.d) }
func (e *env) flow() driver.FlowStore       { return need[driver.FlowStore](e, e.d) }
