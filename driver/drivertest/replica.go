package drivertest

import "github.com/skiplock/skiplock/driver"

// A database that is no replica answers its lag as none: it is as fresh
// as a primary. (A replica's lag is proven on a real pair: the root
// package's TestReadReplica.) A driver without ReplicaStore, which reads
// no replica, skips the case.
var _ = add("ReplicaLagOfAPrimary", func(e *env) {
	st, err := need[driver.ReplicaStore](e, e.d).ReplicaLag(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.InRecovery || st.Lag != 0 {
		e.t.Fatalf("ReplicaLag of a primary: %+v, want not in recovery and no lag", st)
	}
	if r, ok := e.d.(driver.Replicated); ok && r.Replica() != nil {
		e.t.Fatal("Replica: a driver opened without a replica answers one")
	}
})
