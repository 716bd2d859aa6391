package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// refSyntax is how a field reference is written, for error messages.
const refSyntax = "use payload.<property>[.<property>...], tenant, queue or op"

// checkRef checks a field reference of unique.scope or unique.fields and
// returns what is wrong with it, or "".
func checkRef(ref string, hasOps bool) string {
	switch ref {
	case "tenant", "queue":
		return ""
	case "op":
		if !hasOps {
			return `"op" is never set on a kind without ops`
		}
		return ""
	case "payload":
		return "reference a property of the payload: payload.<property>"
	}
	rest, ok := strings.CutPrefix(ref, "payload.")
	if !ok {
		return fmt.Sprintf("unknown reference %q: %s", ref, refSyntax)
	}
	for _, seg := range strings.Split(rest, ".") {
		if seg == "" {
			return fmt.Sprintf("invalid reference %q: empty property name", ref)
		}
	}
	return ""
}

// refSource is what field references read from: the job and its decoded
// payload.
type refSource struct {
	kind    string
	tenant  string
	queue   string
	op      string
	payload map[string]any
}

// value looks a reference up. Dots step into objects; a segment of digits
// steps into an array.
func (r refSource) value(ref string) (any, bool) {
	switch ref {
	case "tenant":
		return r.tenant, true
	case "queue":
		return r.queue, true
	case "op":
		return r.op, true
	}
	var cur any = r.payload
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "payload."), ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || !digits(seg) || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// joined reads references and joins their values with ':'. A string value
// stands as itself, any other as its compact JSON (42, true, {"a":1}).
func (r refSource) joined(refs []string) (string, *ValidationError) {
	parts := make([]string, len(refs))
	for i, ref := range refs {
		v, ok := r.value(ref)
		if !ok {
			name := ref[strings.LastIndexByte(ref, '.')+1:]
			return "", invalid(ref, "missing property %q (kind %q derives its idempotency key from it)", name, r.kind)
		}
		if s, ok := v.(string); ok {
			parts[i] = s
		} else {
			parts[i] = compactJSON(v)
		}
	}
	return strings.Join(parts, ":"), nil
}

// deriveKey builds {kind}:{scope}:{h}, h being the first 16 hex digits of
// the SHA-256 of the field values joined with ':'.
func deriveKey(u *Unique, r refSource) (string, *ValidationError) {
	scope, err := r.joined(u.Scope)
	if err != nil {
		return "", err
	}
	fields, err := r.joined(u.Fields)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(fields))
	return r.kind + ":" + scope + ":" + hex.EncodeToString(sum[:8]), nil
}
