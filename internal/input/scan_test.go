package input

import (
	"encoding/json"
	"strings"
	"testing"
)

// CheckStored and CleanJSON agree on depth and NUL.
func TestCheckStoredAgreesWithCleanJSON(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, doc := range []string{`{}`, `{"a":"x\u0000"}`, `{"a":"\\u0000"}`, `{"a":"\"\\"}`,
		`{"a":` + deep(MaxJSONDepth) + `}`, `{"a":` + deep(MaxJSONDepth+1) + `}`, deep(MaxJSONDepth + 1)} {
		_, cleanErr := CleanJSON("payload", json.RawMessage(doc))
		scanErr := CheckStored("payload", []byte(doc))
		if (cleanErr == nil) != (scanErr == nil) {
			t.Errorf("%.60s: CleanJSON %v, CheckStored %v", doc, cleanErr, scanErr)
		}
	}
}
