package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var english = message.NewPrinter(language.English)

// describe turns one leaf of a JSON Schema validation error into the
// location of the field at fault and a message a person can act on. The
// validator's own messages ("got string, want array", "minimum: got -1,
// want 0") read like a diff; ours read like a rule.
func describe(e *jsonschema.ValidationError) ([]string, string) {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return loc, fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Required:
		if len(k.Missing) == 0 {
			break
		}
		return below(loc, k.Missing[0]), fmt.Sprintf("missing property %q", k.Missing[0])
	case *kind.DependentRequired:
		return below(loc, k.Missing[0]), fmt.Sprintf("missing property %q (required when %q is present)", k.Missing[0], k.Prop)
	case *kind.Dependency:
		return below(loc, k.Missing[0]), fmt.Sprintf("missing property %q (required when %q is present)", k.Missing[0], k.Prop)
	case *kind.AdditionalProperties:
		if len(k.Properties) == 0 {
			break
		}
		// The validator lists them in map order; the smallest is stable.
		name := slices.Min(k.Properties)
		return below(loc, name), fmt.Sprintf("property %q is not allowed", name)
	case *kind.Enum:
		if len(k.Want) == 1 {
			return loc, "must be " + compactJSON(k.Want[0])
		}
		return loc, "must be one of " + jsonList(k.Want)
	case *kind.Const:
		return loc, "must be " + compactJSON(k.Want)
	case *kind.Format:
		if k.Want == "regex" && k.Err != nil {
			// Only a schema's own pattern is checked as a regex; say why.
			return loc, "must be a valid regex: " + k.Err.Error()
		}
		return loc, "must be a valid " + k.Want
	case *kind.Pattern:
		return loc, fmt.Sprintf("must match pattern %q", k.Want)
	}
	return loc, bounds(e.ErrorKind)
}

// bounds describes the size and range rules, and falls back to the
// validator's own words for the rare keywords.
func bounds(ek jsonschema.ErrorKind) string {
	switch k := ek.(type) {
	case *kind.Minimum:
		return "must be >= " + ratString(k.Want)
	case *kind.Maximum:
		return "must be <= " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be > " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be < " + ratString(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want)
	case *kind.MinLength:
		return "must be at least " + count(k.Want, "character") + " long"
	case *kind.MaxLength:
		return "must be at most " + count(k.Want, "character") + " long"
	case *kind.MinItems:
		return "must have at least " + count(k.Want, "item")
	case *kind.MaxItems:
		return "must have at most " + count(k.Want, "item")
	case *kind.MinProperties:
		return "must have at least " + count(k.Want, "property")
	case *kind.MaxProperties:
		return "must have at most " + count(k.Want, "property")
	case *kind.UniqueItems:
		return fmt.Sprintf("must not contain duplicates (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.Not:
		return "must not match the schema under 'not'"
	}
	return ek.LocalizedString(english)
}

// count writes "1 item", "2 items", "3 properties".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(noun, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func below(loc []string, name string) []string {
	return append(slices.Clone(loc), name)
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = compactJSON(v)
	}
	return strings.Join(parts, ", ")
}

// compactJSON encodes v as compact JSON without HTML escaping, object keys
// sorted. It stands for non-string values in messages and derived keys.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
