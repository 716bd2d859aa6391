// Package driver is the boundary between Skiplock's logic and a database:
// every SQL statement lives behind its interfaces.
//
// A driver implements the core contract, Driver: Executor (JobStore,
// HeldStore, DependencyStore, LeaderStore) plus transactions, migrations
// and wake-ups. That is enough to insert, claim, heartbeat, complete, fail,
// snooze, rescue and promote jobs. The optional stores add the rest:
// AdminStore and BulkStore (an operator's actions on jobs and queues),
// StopStore (pausing a running job), StatsStore and MetricsStore
// (statistics, the event feed, metrics), ArchiveStore and RetentionStore
// (archive maintenance and the janitor), TokenStore (API tokens),
// ScheduleStore and PeriodicStore (recurring jobs). The library finds them
// with As, answers ErrUnsupported for a call that needs one the driver
// lacks, and starts no maintenance service that needs one. Full lists them
// all; pgdriver and sqlitedriver implement Full.
//
// Policy is written once, outside the drivers: package outcome decides how
// a failed or snoozed attempt ends and runs over HeldStore in a transaction
// the library begins; package depgraph decides how dependents settle when
// parents finish, over DependencyStore. A driver runs depgraph inside its
// own transaction only where one of its statements finishes jobs itself
// (completion, rescue, cancel, an insert whose parent has finished). The
// conformance suite, drivertest, states the behaviour every driver passes;
// it skips the cases of optional stores a driver lacks.
package driver
