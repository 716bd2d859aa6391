package skiplock

import (
	"fmt"
	"testing"
)

func TestClaimPlacesKeyByQueueTenantAndKindSet(t *testing.T) {
	t.Parallel()
	var cps claimPlaces
	acme, other := "acme", "other"
	a := cps.of("q", &acme, []string{"b", "a"})
	if cps.of("q", &acme, []string{"a", "b"}) != a {
		t.Fatal("the same kinds in another order got another place")
	}
	for _, p := range []*claimPlace{cps.of("q", &other, []string{"a", "b"}), cps.of("q", nil, []string{"a", "b"}),
		cps.of("r", &acme, []string{"a", "b"}), cps.of("q", &acme, []string{"a"})} {
		if p == a {
			t.Fatal("another queue, tenant or kind set shared a place")
		}
	}
	for i := range maxClaimPlaces {
		cps.of(fmt.Sprint("q", i), nil, nil)
	}
	if n := len(cps.places); n > maxClaimPlaces {
		t.Fatalf("%d places kept, at most %d", n, maxClaimPlaces)
	}
}
