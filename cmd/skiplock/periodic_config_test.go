package main

import (
	"strings"
	"testing"
)

func TestPeriodicJobsFromConfigFile(t *testing.T) {
	prio := 9
	jobs, err := periodicJobs([]periodicConfig{{Name: "nightly", Schedule: "0 3 * * *", Kind: "janitor",
		Payload: map[string]any{"days": 7}, Queue: "maintenance", Priority: &prio, CatchUp: true}})
	if err != nil {
		t.Fatal(err)
	}
	j := jobs[0]
	if j.Name != "nightly" || j.Kind != "janitor" || string(j.Payload) != `{"days":7}` || !j.CatchUp ||
		j.Opts.Queue != "maintenance" || *j.Opts.Priority != 9 {
		t.Fatalf("job %+v", j)
	}
	for _, bad := range []periodicConfig{
		{Name: "x", Schedule: "61 * * * *", Kind: "k"},
		{Name: "", Schedule: "@hourly", Kind: "k"},
		{Name: "x", Schedule: "@hourly"},
	} {
		_, err := periodicJobs([]periodicConfig{bad})
		if err == nil || !strings.HasPrefix(err.Error(), "config file: periodic[0].") || !isInputError(err) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
