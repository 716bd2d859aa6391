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
// ScheduleStore and PeriodicStore (recurring jobs), FlowStore (flow keys),
// FailStore and CompleteClaimStore (one-statement fail, complete-and-claim)
// and HotTableStore (the hot table's upkeep: a driver's, never a
// transaction's). The library finds them with As, answers ErrUnsupported
// for a call that needs one the driver lacks, and starts no maintenance
// service that needs one. Full lists those that pgdriver and sqlitedriver
// both implement.
//
// Policy is written once, outside the drivers: package outcome decides how
// a failed or snoozed attempt ends and runs over HeldStore in a transaction
// the library begins; package depgraph decides how dependents settle when
// parents finish, over DependencyStore. A driver runs depgraph inside its
// own transaction only where one of its statements finishes jobs itself
// (completion, rescue, cancel, an insert whose parent has finished). The
// conformance suite, drivertest, states the behaviour every driver passes;
// it skips the cases of optional stores a driver lacks.
//
// Every statement is a method of an interface whose name ends in Store. A
// method that writes nothing, so that a database refusing writes still
// answers it, carries the line //skiplock:read in its doc comment. The
// library's watch of writes (internal/dbwatch) is generated from these
// declarations by `go generate ./internal/dbwatch`; adding a method takes
// its interface, the drivers and a conformance case. A read that a lagging
// streaming replica may answer (a list, a count, a page of an export: never
// a read a write or a claim depends on) carries //skiplock:replica as well:
// the watch runs it on the driver's Replica when it has one.
package driver
