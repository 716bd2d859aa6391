package skiplock

import "time"

// The times a job or schedule may be given (InsertOpts.RunAt, the time
// InsertOpts.Delay gives, Schedule.NextRunAt, FailParams.RetryIn): from the
// Unix epoch to the last instant of year 9999, in UTC. A later time has no
// RFC 3339 form (four-digit years), which every JSON answer of the HTTP API
// and the CLI uses; an earlier one means nothing to a queue.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// checkTime refuses a time outside [minTime, maxTime]; field names it.
func checkTime(field string, t time.Time) error {
	if t.Before(minTime) || t.After(maxTime) {
		return invalid(field, "must be from %s to %s in UTC, got %s", minTime.Format(time.RFC3339),
			maxTime.Format(time.RFC3339), t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// viewMin is the first instant RFC 3339 (and encoding/json) can write.
var viewMin = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)

// ViewTime answers t in UTC, held within the years 0000–9999 that RFC 3339
// can write. The client stores no time outside 1970–9999, but a row written
// into the database by other means may hold one (PostgreSQL takes years up
// to 294276): such a job still renders, at the nearest time a JSON answer
// can show, instead of failing its listing.
func ViewTime(t time.Time) time.Time {
	switch {
	case t.Before(viewMin):
		return viewMin
	case t.After(maxTime):
		return maxTime
	}
	return t.UTC()
}

// viewTimePtr is ViewTime of an optional time.
func viewTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ViewTime(*t)
	return &v
}
