package pgdriver

import (
	"strings"
	"testing"
)

// TestCitusSettingsKeepAllButTheForcedPlan: on Citus the pinned settings
// lose the forced generic plan, which Citus cannot distribute, and keep the
// rest; a change to genericPlan that the rewrite no longer finds fails here.
func TestCitusSettingsKeepAllButTheForcedPlan(t *testing.T) {
	on := &citusMode{}
	on.set(true)
	e := executor{citus: on}
	for _, s := range []string{genericPlan, claimSettings} {
		got, err := e.planSettings(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s, forceGenericPlan) || strings.Contains(got, "plan_cache_mode") ||
			!strings.HasPrefix(got, "SELECT set_config('enable_seqscan', 'off', true)") {
			t.Errorf("on Citus %q became %q", s, got)
		}
	}
	off := &citusMode{}
	off.set(false)
	if got, err := (executor{citus: off}).planSettings(t.Context(), genericPlan); err != nil || got != genericPlan {
		t.Errorf("off Citus genericPlan became %q, %v", got, err)
	}
}
