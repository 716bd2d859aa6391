package sqlitedriver

import (
	"context"
	"database/sql"
	"sort"
	"time"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) QueuePause(ctx context.Context, name string) error {
	_, now, _ := nowArgs()
	_, err := e.wexec(ctx, "QueuePause", sql.Named("name", name), sql.Named("paused", true), now)
	return err
}

func (e executor) QueueResume(ctx context.Context, name string) error {
	_, now, _ := nowArgs()
	_, err := e.wexec(ctx, "QueuePause", sql.Named("name", name), sql.Named("paused", false), now)
	return err
}

func (e executor) QueueExists(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := e.r.QueryRowContext(ctx, q("QueueExists"), named("QueueExists", sql.Named("name", name))...).Scan(&ok)
	return ok, err
}

// QueueNotify wakes the listeners on this file in this process; other
// processes find the jobs by polling.
func (e executor) QueueNotify(ctx context.Context, queues []string) error {
	e.notify(queues)
	return nil
}

func (e executor) QueueList(ctx context.Context, withArchive bool) ([]driver.QueueInfo, error) {
	byName := map[string]*driver.QueueInfo{}
	get := func(name string) *driver.QueueInfo {
		if byName[name] == nil {
			byName[name] = &driver.QueueInfo{Name: name, Counts: map[driver.JobState]int64{}}
		}
		return byName[name]
	}
	type setting struct {
		name   string
		paused bool
	}
	settings, err := collect(func(s scanner) (setting, error) {
		var st setting
		return st, s.Scan(&st.name, &st.paused)
	})(e.rquery(ctx, "QueueSettings"))
	if err != nil {
		return nil, err
	}
	for _, s := range settings {
		get(s.name).Paused = s.paused
	}
	stmts := []string{"QueueCountsLive"}
	_, now, _ := nowArgs()
	if withArchive {
		stmts = append(stmts, "QueueCountsArchive")
	} else {
		since := sql.Named("since", micros(time.Now().Add(-driver.QueueRecentWindow)))
		names, err := collect(scanString)(e.rquery(ctx, "QueueNamesArchiveRecent", since))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			get(name)
		}
	}
	args := map[string][]any{"QueueCountsLive": {now}}
	for _, stmt := range stmts {
		type count struct {
			queue, state string
			n            int64
			age          storedMicros // a real when now - run_at overflows
		}
		counts, err := collect(func(s scanner) (count, error) {
			var c count
			return c, s.Scan(&c.queue, &c.state, &c.n, &c.age)
		})(e.rquery(ctx, stmt, args[stmt]...))
		if err != nil {
			return nil, err
		}
		for _, c := range counts {
			qi := get(c.queue)
			qi.Counts[driver.JobState(c.state)] += c.n
			if age := c.age.duration(); c.state == string(driver.StatePending) && age > 0 {
				qi.OldestPendingAge = age
			}
		}
	}
	out := make([]driver.QueueInfo, 0, len(byName))
	for _, qi := range byName {
		out = append(out, *qi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (e executor) LeaderAttempt(ctx context.Context, name, id string, ttl time.Duration) (bool, error) {
	_, now, _ := nowArgs()
	leaders, err := collect(scanString)(e.wquery(ctx, "LeaderAttempt", sql.Named("name", name), sql.Named("id", id),
		sql.Named("ttl", ttl.Microseconds()), now))
	return len(leaders) == 1 && leaders[0] == id, err
}

func (e executor) LeaderResign(ctx context.Context, name, id string) error {
	_, err := e.wexec(ctx, "LeaderResign", sql.Named("name", name), sql.Named("id", id))
	return err
}

func (e executor) QueueRecordArchived(ctx context.Context, since time.Time) error {
	_, now, _ := nowArgs()
	_, err := e.wexec(ctx, "QueueRecordArchived", sql.Named("since", micros(since)), now)
	return err
}
